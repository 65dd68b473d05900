"""`trapline trace`'s records and the guest's own output, sent to one pipe, come out in program
order (issue 26): a record is written before the guest runs on, so it precedes every byte the
guest writes after the hit. Records were held in their process's buffer until the next record
came (`retval=` of the last call before a printf printed after its text), and a fork child's
records until its buffer was flushed at the end.

The guest is samples/forkscript, whose script fixes when each probed call and each write(2)
happens, in the parent and in a fork child: `a1 k f b1 . a1` calls probed_a, prints its code
hash, forks a child that calls probed_b (which calls probed_c) and prints its counts, reaps it,
calls probed_a again and prints its counts."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from instrumenter.strategies.registry import CHOICES as STRATEGIES
from tests.quick_profile import alternates

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
SCRIPT = ["a1", "k", "f", "b1", ".", "a1"]

pytestmark = pytest.mark.e2e

# What the script does, in order: records as (pid, probe kind), the guest's lines by their start.
PROGRAM_ORDER = [
    ("record", 100, "uprobe"), "P: code=",
    ("record", 101, "uretprobe"), "Pf1: a=0 b=1 c=1", ("record", 101, "proc"),
    "P: reaped Pf1 status 0",
    ("record", 100, "uprobe"), "P: a=2 b=0 c=0", ("record", 100, "proc"),
]


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _merged_output(arch: str, *options: str) -> list[str]:
    """trace's stdout and stderr in one pipe, as a terminal shows them."""
    binary = SAMPLES / arch / "forkscript"
    done = subprocess.run([sys.executable, "-m", "trapline", "trace", *options,
                           "-p", f"uprobe:{binary}:probed_a", "-p", f"uretprobe:{binary}:probed_c",
                           "-p", "proc:exit", "--", str(binary), *SCRIPT],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout.decode()
    return done.stdout.decode().splitlines()


def _event(line: str):
    """A record as (record, pid, probe kind); a line of the guest's as the expected start it has."""
    if line.startswith("{"):
        record = json.loads(line)
        return ("record", record["pid"], record["probe"].split(":")[0])
    fields = line.split()
    if len(fields) > 3 and fields[0].isdigit() and fields[1].isdigit():
        return ("record", int(fields[1]), fields[3].split(":")[0])
    return next((start for start in PROGRAM_ORDER if isinstance(start, str) and line.startswith(start)),
                line)


@pytest.mark.parametrize("strategy", STRATEGIES)
@alternates("arch")
def test_records_and_guest_output_on_stdout_come_in_program_order(arch, strategy):
    assert [_event(line) for line in _merged_output(arch, "--strategy", strategy)] == PROGRAM_ORDER


def test_jsonl_records_come_in_program_order(arch):
    assert [_event(line) for line in _merged_output(arch, "--format", "jsonl")] == PROGRAM_ORDER


def test_records_written_to_stderr_by_o_come_in_program_order(arch):
    """-o /dev/stderr: the records through a file of trapline's own, the guest's text through
    its fd 1, into one pipe."""
    assert [_event(line) for line in _merged_output(arch, "-o", "/dev/stderr")] == PROGRAM_ORDER
