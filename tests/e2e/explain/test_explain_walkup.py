"""`trapline explain --technique walkup` (trapline/explain/walkup.py): callchain's hot spot leaf
found by sampling, its identifying hook naming inner, then inner, middle and outer measured and
removed level by level up to main, on both arches."""
import pytest

from trapline.explain.walkup import explain_walkup

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_walk_climbs_from_leaf_to_main_level_by_level(arch):
    doc = explain_walkup(arch)
    spots = [i["text"] for i in doc["sections"][0]["items"]]
    assert spots[0].startswith("window 1: leaf has ")
    steps = [i for i in doc["sections"][1]["items"] if i["kind"] == "event"]
    assert all(s["tid"] is None for s in steps)
    timeline = [s["at"] for s in steps]
    assert timeline == sorted(timeline)
    said = [s["what"].split(" [hot spot")[0] for s in steps]
    assert said[0].startswith("identifying hook inserted at the entry of leaf")
    inserted = [w.split(" in ")[1].split(" (")[0] for w in said if w.startswith("entry/exit hooks")]
    removed = [w.split(" of ")[1].split(" (")[0] for w in said if w.startswith("hooks of ")]
    assert inserted == ["inner", "middle", "outer"] and removed == inserted
    assert "the walk of leaf reached the top at main" in said
    learnt = [i["text"] for i in doc["sections"][2]["items"]]
    assert learnt[0] == "leaf (level 0): callers seen: inner (1 calls)"
    assert learnt[-1].startswith("outer (level 3): callers seen: main")
