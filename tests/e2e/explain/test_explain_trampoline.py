"""`trapline explain --technique trampoline` (trapline/explain/trampoline.py): the page of
US 9,336,001 with its handler, block by block, the same on every run."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.trampoline import explain_trampoline

pytestmark = pytest.mark.e2e
HANDLERS = Path(__file__).resolve().parents[3] / "samples" / "handlers"
ORDER = ["UserInstrumentation(count)", "Save_Registers", "Call_User_BreakpointHandler",
         "Restore_Registers", "OriginalInstruction_Copy", "Jump_NextInstruction",
         "User_BreakpointHandler"]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_listing_names_the_seeds_blocks_and_shows_the_handlers_effect(arch):
    text = explain_trampoline(arch)
    blocks = re.findall(r"^  (\S+)", text, re.M)
    assert blocks == ORDER
    assert re.search(r"int3 \(cc\) replaces `push [er]bp` \(55\)", text)
    assert "call 0x" in text and "fxsave" not in text           # limit_n asks for no fxsave
    assert "output 'fib(10) = 5', 15 hits counted in the page" in text
    assert explain_trampoline(arch) == text                      # deterministic


def test_the_cli_takes_another_handler():
    result = CliRunner().invoke(explain, ["--technique", "trampoline", "--arch", "x86_64",
                                          "--handler", str(HANDLERS / "x86_64" / "count.s")])
    assert result.exit_code == 0, result.output
    assert "add qword ptr [rsi], 1" in result.output
    assert "output 'fib(10) = 55', 177 hits counted in the page" in result.output
