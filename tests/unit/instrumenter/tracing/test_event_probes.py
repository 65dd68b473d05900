"""proc:fork|vfork|exec|exit and signal:NAME probes (instrumenter/tracing/event_probes.py): a
record per debug-interface event of a traced process, with pid, tid, virtual time and the
event's fields, in the text and JSON Lines formats."""
import json
from pathlib import Path

import pytest

from instrumenter.probes.definitions import Probe
from trapline.probespec import parse_probe_spec
from trapline.sandbox import Sandbox
from trapline.tracing import format_jsonl, format_text

BIN = Path(__file__).resolve().parents[4] / "samples" / "bin"


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _run(arch: str, program: str, *specs: str, **options):
    probes = [Probe(parse_probe_spec(s)) for s in specs]
    result = Sandbox(probes=probes, **options).run([str(BIN / arch / program)])
    return result, {p.spec.text: p.hits for p in probes}


def test_fork_and_exit_records_name_parent_child_and_status(arch):
    result, hits = _run(arch, "fork_pipe", "proc:fork", "proc:exit", "proc:vfork")
    forks = [r for r in result.records if r.probe == "proc:fork"]
    exits = {r.pid: dict(r.fields) for r in result.records if r.probe == "proc:exit"}
    assert [(r.pid, r.tid, dict(r.fields)) for r in forks] == [
        (100, 100, {"child_pid": 101}), (100, 100, {"child_pid": 102})]
    assert exits == {100: {"code": 0}, 101: {"code": 5}, 102: {"signal": "SIGPIPE", "core": 0}}
    assert hits == {"proc:fork": 2, "proc:exit": 3, "proc:vfork": 0}
    assert all(r.ts > 0 and r.kind == "proc" for r in result.records)


def test_vfork_and_exec_records(arch):
    result, _ = _run(arch, "vfork_status", "proc:vfork", "proc:exec")
    vforks = [dict(r.fields)["child_pid"] for r in result.records if r.probe == "proc:vfork"]
    execs = [r for r in result.records if r.probe == "proc:exec"]
    assert vforks == [101, 102]
    assert [(r.pid, dict(r.fields)["argv"][1:]) for r in execs] == [(102, ["--exit3"])]
    assert dict(execs[0].fields)["path"].endswith("vfork_status")


def test_signal_records_say_what_happened(arch):
    result, hits = _run(arch, "signals", "signal:SIGUSR1", "signal:SEGV", "signal:SIGCHLD")
    records = [r for r in result.records if r.kind == "signal"]
    assert hits["signal:SIGUSR1"] >= 1 and hits["signal:SEGV"] == 1
    segv = next(r for r in records if r.probe == "signal:SEGV")
    assert dict(segv.fields) == {"signal": "SIGSEGV", "action": "handler", "code": 1}
    # the records' times are the run's clock: in order within the process
    assert [r.ts for r in records] == sorted(r.ts for r in records)


def test_an_ignored_signal_is_recorded_as_ignored(arch):
    """fork_pipe leaves SIGCHLD at SIG_DFL (ignored by default): each child's exit still makes
    a record, action "ignored", si_code CLD_EXITED (1) then CLD_KILLED (2)."""
    result, hits = _run(arch, "fork_pipe", "signal:SIGCHLD")
    records = [dict(r.fields) for r in result.records if r.probe == "signal:SIGCHLD"]
    assert records == [{"signal": "SIGCHLD", "action": "ignored", "code": 1},
                       {"signal": "SIGCHLD", "action": "ignored", "code": 2}]


def test_strace_prints_ignored_and_fatal_signals_as_strace_does(arch):
    """Real strace shows the delivery of a signal the program ignores and of one that kills
    it: "--- SIGCHLD {...} ---" in the parent, "--- SIGPIPE {...} ---" before "+++ killed by
    SIGPIPE +++" in the child that writes to a closed pipe."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "--strace", "-f", "--",
                           str(BIN / arch / "fork_pipe")], capture_output=True, timeout=120)
    lines = done.stderr.decode().splitlines()
    sigchld = [line for line in lines if line.startswith("--- SIGCHLD")]
    assert [line.split("si_code=")[1].split(",")[0] for line in sigchld] == ["CLD_EXITED", "CLD_KILLED"]
    assert "si_pid=101" in sigchld[0] and "si_status=5" in sigchld[0]
    killed = lines.index("[pid   102] +++ killed by SIGPIPE +++")
    assert lines[killed - 1].startswith("[pid   102] --- SIGPIPE {si_signo=SIGPIPE, si_code=SI_USER")


def test_event_records_in_both_formats(arch):
    result, _ = _run(arch, "fork_pipe", "proc:exit")
    record = next(r for r in result.records if r.pid == 102)
    assert format_text(record).split()[3:] == ["proc:exit", 'signal="SIGPIPE"', "core=0"]
    as_json = json.loads(format_jsonl(record))
    assert as_json["fields"] == {"signal": "SIGPIPE", "core": 0} and as_json["pid"] == 102


def test_untraced_children_make_no_records(arch):
    result, _ = _run(arch, "fork_pipe", "proc:exit", "uprobe:fork_pipe:main",
                     children="detach")
    assert [r.pid for r in result.records if r.probe == "proc:exit"] == [100]
