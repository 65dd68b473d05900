"""A user's strategy is usable wherever ours is (issue 29): `trapline profile --walk-up
--strategy`, `trapline gdbserver --strategy` and an experiment spec's `strategy` take
`package.module:Class` (trace's and check's are tested in test_check.py), place it as they
place ours, and refuse a bad one in one line naming it."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.e2e.gdb_client import ScriptedGdb

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
ARCHES = ("i386", "x86_64")
USER = '''
from instrumenter.strategies.trampoline import TrampolineProbes


class MyTrampolines(TrampolineProbes):
    """A user's strategy: ours under another name, from another package."""
'''
THEIRS = "userprobes:MyTrampolines"


@pytest.fixture(scope="module")
def user_package(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("user")
    (folder / "userprobes.py").write_text(textwrap.dedent(USER))
    return folder


def trapline(*args, pythonpath=(), cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "trapline", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=900)


def walkup_line(text: str) -> str:
    """The walk-up's summary, its wrapped lines joined."""
    start = text.index("walk-up: ")
    return " ".join(text[start:].split("\n\n", 1)[0].split())


@pytest.mark.parametrize("arch", ARCHES)
def test_profile_walks_up_with_a_users_strategy_as_with_ours(arch, user_package):
    runs = {s: trapline("profile", "--walk-up", "--interval", "500", "--window", "10",
                        "--strategy", s, str(SAMPLES / arch / "hotchain"),
                        pythonpath=[user_package]) for s in ("trampoline", THEIRS)}
    for done in runs.values():
        assert done.returncode == 0, done.stderr
    ours, theirs = walkup_line(runs["trampoline"].stderr), walkup_line(runs[THEIRS].stderr)
    count = ours.split("(strategies: trampoline ")[1].rstrip(")")
    assert int(count) > 0 and theirs == ours.replace("trampoline ", f"{THEIRS} ")
    bad = trapline("profile", "--walk-up", "--strategy", "nosuch.mod:X",
                   str(SAMPLES / arch / "fib"))
    assert bad.returncode == 2 and ("Invalid value for '--strategy': strategy nosuch.mod:X: "
                                    "cannot import nosuch.mod") in bad.stderr


@pytest.mark.parametrize("arch", ARCHES)
def test_gdbserver_places_a_users_strategy_and_records_every_hit(arch, user_package):
    gdb = ScriptedGdb(SAMPLES / arch / "fib", ("3",), probes=["uprobe:fib:fib"], strategy=THEIRS,
                      pythonpath=[user_package])
    try:
        gdb.write(b"+")
        gdb.ask(b"qSupported:multiprocess+")
        gdb.no_ack()
        assert gdb.ask(b"vCont;c") == b"W00;process:64"
        status, err = gdb.close()
    finally:
        if gdb.proc.poll() is None:
            gdb.proc.kill()
    assert status == 0
    assert err.count("uprobe:fib:fib") == 5            # fib(3): 5 calls, all recorded
    bad = trapline("gdbserver", "--stdio", "--strategy", "userprobes:Nothing", "--",
                   str(SAMPLES / arch / "fib"), pythonpath=[user_package])
    assert bad.returncode == 2
    assert "strategy userprobes:Nothing: userprobes has no class Nothing" in bad.stderr


SPEC = """
name = "user-strategy"
[program]
sample = "fib"
argv = ["6"]
[run]
probes = ["uprobe:fib:fib"]
[sweep]
strategy = ["trampoline", "{theirs}"]
"""


def test_an_experiment_sweeps_a_users_strategy_beside_ours(tmp_path, user_package):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(theirs=THEIRS))
    done = trapline("experiment", "run", str(spec), "-o", str(tmp_path / "out"), "--jobs", "1",
                    pythonpath=[user_package])
    assert done.returncode == 0, done.stdout + done.stderr
    from trapline.experiments.results import read_csv
    header, *rows = read_csv((tmp_path / "out" / "results.csv").read_text())
    strategy, hits = header.index("strategy"), header.index("hits")
    assert [(r[strategy], r[hits]) for r in rows] == [("trampoline", "25"), (THEIRS, "25")]
    spec.write_text(SPEC.format(theirs="userprobes:Nothing"))
    bad = trapline("experiment", "run", str(spec), "-o", str(tmp_path / "bad"),
                   pythonpath=[user_package])
    assert bad.returncode == 2
    assert "sweep.strategy: strategy userprobes:Nothing: userprobes has no class Nothing" in \
        bad.stdout + bad.stderr
