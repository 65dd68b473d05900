"""`trapline explain --technique backpatch` (trapline/explain/backpatch.py): vfork_probe under
each children policy with the byte at work() after each event: follow keeps the int3 and
records the children; detach backpatches at the child's first trap (lazy) or at pre-fork
(eager) and re-inserts at vfork-done; naive deadlocks, on both arches."""
import pytest

from trapline.explain.backpatch import explain_backpatch

pytestmark = pytest.mark.e2e


def _section(doc, start):
    [section] = [s for s in doc["sections"] if (s["title"] or "").startswith(start)]
    return [i for i in section["items"] if i["kind"] == "event"]


def _after(events, words):
    return next(e["site_bytes"] for e in events if words in e["what"])


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_site_bytes_follow_each_policy(arch):
    doc = explain_backpatch(arch)
    facts = doc["facts"]
    assert facts["follow"]["hits"] == 6 and facts["follow"]["pids_hit"] == [100, 101, 102]
    follow = _section(doc, "1. --children follow")
    assert {e["site_bytes"] for e in follow} == {"cc"}              # never backpatched
    lazy = _section(doc, "2. --children detach --backpatch lazy")
    assert _after(lazy, "backpatched 1 sites (lazy") != "cc"         # the original byte
    assert _after(lazy, "re-inserted 1 sites") == "cc"
    eager = _section(doc, "3. --children detach --backpatch eager")
    eager_patch = next(n for n, e in enumerate(eager) if "backpatched 1 sites (eager)" in e["what"])
    vfork = next(n for n, e in enumerate(eager) if e["what"].startswith("vfork:"))
    assert eager_patch < vfork and eager[vfork]["site_bytes"] != "cc"   # before the child runs
    for mode in ("detach --backpatch lazy", "detach --backpatch eager"):
        assert facts[mode]["hits"] == 3 and facts[mode]["pids_hit"] == [100]
    naive = _section(doc, "4. --children naive")
    assert "never services it" in naive[-2]["what"] and "deadlock" in naive[-1]["what"]
    assert facts["naive"]["deadlock"] is True
