"""`trapline explain --technique detach` (trapline/explain/detach.py): a detach with a thread at
a trampoline and landings on its stack, step by step, the same on every run."""
import re

import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.detach import explain_detach

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_listing_shows_the_moved_pc_and_each_rewritten_return_address(arch):
    text = explain_detach(arch)
    assert re.search(r"PC 0x[0-9a-f]+ \(fib's trampoline\) -> 0x[0-9a-f]+ <fib> \[exact", text)
    rewritten = re.findall(r"\(uretprobe landing\) -> 0x[0-9a-f]+ <(\S+)>  found by unwinding", text)
    assert rewritten == ["fib+0x1d"] * 5 + [rewritten[-1]] and rewritten[-1].startswith("main+")
    assert re.search(r"<fib>: cc -> 55", text)
    assert "tool areas after: none" in text
    assert "output 'fib(8) = 21'; records: 6 entries and 0 returns" in text
    assert explain_detach(arch) == text                          # deterministic


def test_the_cli_shows_it():
    result = CliRunner().invoke(explain, ["--technique", "detach", "--arch", "x86_64"])
    assert result.exit_code == 0, result.output
    assert "found by unwinding" in result.output
