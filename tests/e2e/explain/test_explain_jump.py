"""`trapline explain --technique jump` (trapline/explain/jump.py): where a 5-byte jump fits in
fib and why not elsewhere, the patch, the relocated instructions, and the first hit followed
instruction by instruction with the guest's counter going up, on both arches."""
import re

import pytest

from trapline.explain.document import render_text
from trapline.explain.jump import explain_jump

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_jump_its_refusals_its_relocated_call_and_a_counted_hit(arch):
    doc = explain_jump(arch)
    text = render_text(doc)
    fits = doc["sections"][0]["items"]
    refused = [i["note"] for i in fits if "refused" in i["note"]]
    assert any("branches into the patched bytes" in r for r in refused)
    assert any("a 5-byte jump does not fit" in r for r in refused)
    assert fits[0]["note"].endswith("a jump fits here")
    assert len(re.findall(r"fib's instructions refer to \d+ addresses \(.*\); none inside ", text)) == 2
    patches = [i for s in doc["sections"] for i in s["items"] if i["kind"] == "bytes"]
    assert [p["after"][:2] for p in patches] == ["e9", "e9"]           # jmp rel32 at both sites
    assert patches[0]["before"][:2] == "55"                            # push %ebp / push %rbp
    # the second site covers a call: its copy pushes the ORIGINAL return address
    assert re.search(r"`call 0x[0-9a-f]+`: call re-made: the ORIGINAL return address is pushed",
                     text)
    steps = [i for i in doc["sections"][-2]["items"] if i["kind"] == "step"]
    assert steps[0]["asm"].startswith("jmp") and steps[-1]["last"]
    counted = [c for s in steps for c in s["changes"] if c["name"] == "counter"]
    assert counted == [{"name": "counter", "before": 0, "after": 1}]
    assert doc["facts"]["output"] == "fib(10) = 55"
    assert list(doc["facts"]["hits"].values())[0] == 177             # every call of fib(10)
