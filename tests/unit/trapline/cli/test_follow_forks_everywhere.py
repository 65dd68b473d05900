"""`-f` is strace's -f (follow forks) in every command that runs a program (issue 33), and
trace's old `-f FORMAT` still runs, with a deprecation warning (trapline/cli/format_deprecation.py)."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main
from trapline.cli.format_deprecation import WARNING

ROOT = Path(__file__).resolve().parents[4]
ARCHES = ("i386", "x86_64")


def _sample(arch: str, name: str) -> str:
    return str(ROOT / "samples" / "bin" / arch / name)


def _invoke(*argv: str):
    return CliRunner().invoke(main, [*argv])


def _records(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("command", ["run", "trace", "profile"])
def test_dash_f_follows_the_children(arch, command, tmp_path):
    out = tmp_path / "trace"
    options = {"run": [], "trace": ["-p", "syscall:exit_group"], "profile": []}[command]
    output = "--strace-output" if command == "trace" else "-o"
    if command == "profile":
        output = "--output"
    result = _invoke(command, "--clear-env", *options, "-f", output, str(out), "--",
                     _sample(arch, "vfork_status"))
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    pids = {line.split()[0] for line in lines}
    assert len(pids) == 3, lines                     # the parent and its two children
    assert sum(line.endswith("+++ exited with 0 +++") for line in lines) == 1


@pytest.mark.parametrize("spelling", [["-f", "jsonl"], ["-fjsonl"]])
def test_trace_dash_f_format_is_the_old_format_with_a_warning(spelling):
    result = _invoke("trace", "-p", "uprobe:fib:fib", *spelling, "--", _sample("x86_64", "fib"), "5")
    assert result.exit_code == 0, result.output
    assert len([r for r in _records(result.stdout) if r["probe"] == "uprobe:fib:fib"]) == 15
    assert result.stderr.splitlines() == [WARNING.format(name="jsonl")]


def test_trace_format_has_no_warning():
    result = _invoke("trace", "--format", "jsonl", "-p", "uprobe:fib:fib", "--",
                     _sample("x86_64", "fib"), "5")
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert len(_records(result.stdout)) == 15


def test_the_programs_own_dash_f_is_left_alone():
    """`-f jsonl` after the program's name is its argument (fib rejects it: status 1)."""
    result = _invoke("trace", "-p", "syscall:exit_group", _sample("x86_64", "fib"), "-f", "jsonl")
    assert WARNING.format(name="jsonl") not in result.stderr
    assert not _records(result.stdout)
