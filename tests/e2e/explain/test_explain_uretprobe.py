"""`trapline explain --technique uretprobe` (trapline/explain/uretprobe.py): on tailcall, the
return slot swapped for the landing, a tail call chained to its caller's pending return and
reported with it, frames abandoned by longjmp dropped at the next entry, on both arches."""
import re

import pytest

from trapline.explain.uretprobe import explain_uretprobe

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_landing_shadow_stack_tail_calls_and_longjmp(arch):
    doc = explain_uretprobe(arch)
    landing = doc["facts"]["landing"]
    events = [i["what"] for i in doc["sections"][1]["items"] if i["kind"] == "event"]
    first = events[0]
    assert first.startswith("entry of top: return address ") and \
        f":= landing {landing:#x}" in first and first.endswith("shadow [top]")
    assert events[2].startswith("entry of hot, tail-called") and \
        events[2].endswith("shadow [top, mid, hot (chained)]")
    # one return through the landing reports the chain, innermost first, and resumes in top
    assert re.match(r"ret reached the landing: returns reported for hot, mid \(innermost first\)"
                    r".*resumes at the real return address 0x[0-9a-f]+ <top\+0x[0-9a-f]+>; "
                    r"shadow \[top\]$", events[3])
    assert "chained to jumper's pending return" in events[10]
    assert "dropped jumper, thrower: abandoned (longjmp)" in events[11]
    returns = doc["facts"]["returns"]
    assert returns == {"uretprobe:tailcall:top": 2, "uretprobe:tailcall:mid": 2,
                       "uretprobe:tailcall:hot": 6, "uretprobe:tailcall:jumper": 0,
                       "uretprobe:tailcall:thrower": 0}
    assert doc["facts"]["output"].startswith("hot=6 mid=2 top=2")
