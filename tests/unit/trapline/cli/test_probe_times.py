"""`trapline trace --enable-at N --disable-at N` (trapline/cli/probe_times.py): each applies to
the -p written last before it; misplaced or repeated ones are usage errors (exit status 2)."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main

FIB = str(Path(__file__).resolve().parents[4] / "samples" / "bin" / "x86_64" / "fib")


def _trace(*options: str):
    return CliRunner().invoke(main, ["trace", "--format", "jsonl", "--strategy", "trampoline",
                                     *options, "--", FIB, "12"])


def test_each_option_applies_to_the_probe_before_it():
    result = _trace("-p", "uprobe:fib:fib", "-p", "uretprobe:fib:fib", "--enable-at", "3000",
                    "--disable-at", "6000", "-p", "syscall:exit_group", "--disable-at", "5")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    entries = [r["ts"] for r in records if r["probe"] == "uprobe:fib:fib"]
    returns = [r["ts"] for r in records if r["probe"] == "uretprobe:fib:fib"]
    assert len(entries) == 465                                       # fib(12): 2*F(13)-1 calls
    assert returns and all(3000 < ts <= 6000 for ts in returns)
    assert not [r for r in records if r["probe"] == "syscall:exit_group"]   # off after 5


@pytest.mark.parametrize("options, message", [
    (["--enable-at", "5", "-p", "uprobe:fib:fib"], "applies to the -p before it, and none is"),
    (["-p", "uprobe:fib:fib", "--enable-at", "5", "--enable-at", "7"], "--enable-at given twice"),
    (["-p", "uprobe:fib:fib", "--enable-at", "9", "--disable-at", "5"], "comes before"),
])
def test_misplaced_times_are_usage_errors(options, message):
    result = CliRunner().invoke(main, ["trace", *options, "--", FIB, "3"])
    assert result.exit_code == 2 and message in result.output, result.output


def test_help_says_how_the_times_attach():
    result = CliRunner().invoke(main, ["trace", "--help"])
    assert "--enable-at N" in result.output and "-p written last before them" in result.output
