"""`trapline check` end to end (issue 29): our strategies pass; a naive strategy in a user's
package is caught, shrunk and reported with a reproducer that reproduces it byte for byte;
bad strategies are one line each while the others are still checked; `--self-test` catches
every planted relocation bug on both arches; a user's class is placed by `trace` like ours."""
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trapline.testing.host import host_unavailable

ROOT = Path(__file__).resolve().parents[3]
FIB = {arch: ROOT / "samples" / "bin" / arch / "fib" for arch in ("i386", "x86_64")}

NAIVE = '''
"""A naive strategy: the trampoline strategy whose relocator copies the bytes."""
from instrumenter.insn.emit import Emitter
from instrumenter.insn.policy import classify
from instrumenter.insn.relocate import Relocated
from instrumenter.strategies.trampoline import TrampolineProbes


def copy_bytes(insn, new_address, arch, **options):
    e = Emitter(new_address, arch)
    e.raw(insn.raw)
    e.jump(insn.next_address, "fallthrough")
    return Relocated(insn, classify(insn).cls, new_address, bytes(e.code), tuple(e.exits), "naive")


class CopyBytes(TrampolineProbes):
    relocator = staticmethod(copy_bytes)


class NotAStrategy:
    pass


class RaisesWhilePlacing(TrampolineProbes):
    def place(self, process, address, hook, owner):
        raise ZeroDivisionError("placing went wrong")


class HangsWhilePlacing(TrampolineProbes):
    def place(self, process, address, hook, owner):
        while True:
            pass
'''


def trapline(*args, pythonpath=(), cwd=ROOT, timeout=600):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "trapline", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def user_package(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("user")
    (folder / "naiveprobes.py").write_text(NAIVE)
    return folder


def test_our_strategies_pass_on_both_arches():
    done = trapline("check", "--strategy", "trampoline", "--strategy", "jump", "--examples", "10",
                    "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(done.stdout)
    # trampoline: relocation (under Unicorn, and on the host CPU where it is x86-64 Linux) and
    # one probed sequence; jump: three probed-sequence variants; both: the whole-program
    # properties (process trees, threads at small quanta, removal and detach); per arch
    host = [] if host_unavailable() else [("trampoline", "relocation on the host CPU")]
    whole = ["process tree (fork/vfork/exec)", "threads at small quanta", "removal and detach"]
    per_arch = [("trampoline", "relocation"), *host, ("trampoline", "probed sequence (trampoline)"),
                *(("trampoline", w) for w in whole)]
    assert [(r["strategy"], r["property"]) for r in rows[:2 * len(per_arch)]] == per_arch * 2
    assert len(rows) == 2 * (len(per_arch) + 3 + 3) and {r["arch"] for r in rows} == {"i386", "x86_64"}
    assert all(r["failed"] == 0 and r["error"] is None and r["accepted"] > 0 for r in rows)
    # every form ran: a case per class and one per form (3 examples each at --examples 10)
    assert rows[0]["run"] > 200


def test_a_naive_strategy_is_caught_shrunk_and_reproduced(user_package):
    args = ("check", "--strategy", "naiveprobes:CopyBytes", "--arch", "x86_64", "--examples", "30")
    done = trapline(*args, pythonpath=[user_package])
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    report = out.split("FAILED: naiveprobes:CopyBytes relocation x86_64\n", 1)[1].split("\n\n")[0]
    lines = report.splitlines()
    # shrunk: the simplest instruction the copy gets wrong, a call through a register,
    # whose return address is the copy's
    assert lines[0].startswith("relocation of `call ") and "by naiveprobes:CopyBytes" in lines[0]
    assert "  copy (naive):" in lines and "  first difference: memory at" in report
    assert "in place 0x" in lines[0] and "/ relocated 0x" in lines[0]
    command = next(line.strip() for line in lines if line.strip().startswith("trapline check"))
    assert command == "trapline check --strategy naiveprobes:CopyBytes --arch x86_64 --examples 30 --seed 0"
    assert any(line.strip().startswith("@example(case=RelocationCase('near', 'call_indirect'")
               for line in lines)
    again = trapline(*shlex.split(command)[1:], pythonpath=[user_package])
    assert again.stdout == out


def test_the_example_line_reproduces_the_failure_in_a_test(user_package):
    done = trapline("check", "--strategy", "naiveprobes:CopyBytes", "--arch", "i386",
                    "--examples", "30", "--classes", "call_rel", pythonpath=[user_package])
    example = next(line.strip() for line in done.stdout.splitlines() if line.strip().startswith("@example("))
    test = user_package / "test_pasted.py"
    test.write_text(textwrap.dedent(f'''
        from hypothesis import example, given
        from trapline.testing import Layout, RelocationCase, relocation_cases
        import naiveprobes

        @given(case=relocation_cases("i386", classes=["call_rel"]))
        {example}
        def test_relocation(case, trapline_relocation):
            trapline_relocation(case, naiveprobes.CopyBytes)
    '''))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(user_package), str(ROOT)]))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                          "trapline.testing.plugin", str(test)], capture_output=True, text=True,
                         cwd=user_package, env=env, timeout=600)
    assert run.returncode == 1 and "relocation of `call " in run.stdout, run.stdout + run.stderr


def test_bad_strategies_are_one_line_each_and_the_others_are_checked(user_package):
    done = trapline("check", "--strategy", "naiveprobes:NotAStrategy", "--strategy", "nosuch.mod:X",
                    "--strategy", "trampoline", "--arch", "i386", "--examples", "5",
                    pythonpath=[user_package])
    errors = [line for line in done.stderr.splitlines() if line.startswith("trapline: strategy")]
    assert errors == [
        "trapline: strategy naiveprobes:NotAStrategy: NotAStrategy does not implement the strategy "
        "interface (instrumenter/strategies/base.py): no place, remove, check",
        "trapline: strategy nosuch.mod:X: cannot import nosuch.mod: ModuleNotFoundError: No module "
        "named 'nosuch'"]
    assert done.returncode == 2 and "│ trampoline │ relocation" in done.stdout


def test_the_self_test_catches_every_planted_bug_on_both_arches():
    done = trapline("check", "--self-test", "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(done.stdout)
    assert len({row["bug"] for row in rows}) == 7 and len(rows) == 14
    for row in rows:
        if row["not_applicable"]:
            assert row["arch"] == "i386" and "RIP-relative" in row["not_applicable"]
            continue
        # caught within the ci budget: inside the case that caught it (30 examples for a
        # class at a placement, 5 for a form), reported shrunk
        assert row["caught"], row
        number, budget = re.fullmatch(r".*: example (\d+) of (\d+)", row["caught_in"]).groups()
        assert 1 <= int(number) <= int(budget) in (30, 5), row
        assert row["case"].startswith("relocation of `"), row


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_trace_places_a_user_class_like_ours_and_names_one_that_raises(arch, user_package):
    ours = trapline("trace", "-c", "-p", f"uprobe:{FIB[arch]}:fib", "--strategy", "trampoline",
                    str(FIB[arch]), pythonpath=[user_package])
    theirs = trapline("trace", "-c", "-p", f"uprobe:{FIB[arch]}:fib", "--strategy",
                      "naiveprobes:CopyBytes", str(FIB[arch]), pythonpath=[user_package])
    assert theirs.returncode == ours.returncode == 0
    hits = lambda text: [line.split()[1] for line in text.splitlines() if line.startswith("uprobe:")]  # noqa: E731
    assert hits(theirs.stderr) == hits(ours.stderr) and hits(ours.stderr)[0] != "0"
    assert theirs.stdout == ours.stdout
    raising = trapline("trace", "-p", f"uprobe:{FIB[arch]}:fib", "--strategy",
                       "naiveprobes:RaisesWhilePlacing", str(FIB[arch]), pythonpath=[user_package])
    assert raising.returncode == 2
    assert raising.stderr.strip().splitlines()[-1].startswith(
        "trapline: strategy naiveprobes:RaisesWhilePlacing: ZeroDivisionError while placing ")


def test_a_strategy_that_hangs_fails_at_the_time_limit_with_a_report(user_package):
    done = trapline("check", "--strategy", "naiveprobes:HangsWhilePlacing", "--arch", "i386",
                    "--time-limit", "1", "--no-host", pythonpath=[user_package])
    assert done.returncode == 1, done.stdout + done.stderr
    report = done.stdout.split("FAILED: naiveprobes:HangsWhilePlacing probed sequence "
                               "(naiveprobes:HangsWhilePlacing) i386\n", 1)[1].splitlines()
    assert report[0] == "sequence: example 1 still running after 1 s (a hang; not shrunk)"
    assert report[1].startswith("  example: ProbedCase(Layout('i386', ")
    assert report[3] == ("    trapline check --strategy naiveprobes:HangsWhilePlacing --arch i386 "
                         "--examples 30 --seed 0 --time-limit 1 --no-host")
    # its relocator is ours: that property ran and passed
    assert "│ naiveprobes:HangsWhilePlacing │ relocation " in done.stdout


def _failure(stdout: str, header: str) -> list[str]:
    return stdout.split(header + "\n", 1)[1].split("\n\n")[0].splitlines()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_reports_replay_line_runs_exactly_its_case_again(arch, user_package):
    done = trapline("check", "--strategy", "naiveprobes:CopyBytes", "--arch", arch, "--examples",
                    "30", "--classes", "call_indirect", "--no-host", pythonpath=[user_package])
    assert done.returncode == 1, done.stdout + done.stderr
    header = f"FAILED: naiveprobes:CopyBytes relocation {arch}"
    report = _failure(done.stdout, header)
    replay = report[-1].strip()
    assert replay.startswith("trapline check --strategy naiveprobes:CopyBytes --no-host --replay \""
                             "RelocationCase(")
    case = replay.split("--replay ", 1)[1]
    assert report[-2].strip() == f"@example(case={case[1:-1]})"
    # no seed, no generator: the case as printed, one example, the same report
    again = trapline(*shlex.split(replay)[1:], pythonpath=[user_package])
    assert again.returncode == 1, again.stdout + again.stderr
    seed = f"    trapline check --strategy naiveprobes:CopyBytes --arch {arch} --examples 30 --seed 0 " \
           "--classes call_indirect --no-host"
    assert seed in report and _failure(again.stdout, header) == [line for line in report if line != seed]
    assert re.search(rf"│ naiveprobes:CopyBytes │ relocation\s+│ {arch}\s+│\s+1 │\s+0 │", again.stdout)
