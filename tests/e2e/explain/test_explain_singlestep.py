"""`trapline explain --technique singlestep|singlestep-stopall` (trapline/explain/singlestep.py):
two threads of loss_threads at a small quantum; the baseline's timeline marks the execution no
probe saw, inside another thread's window; stop-all holds the others and loses none."""
import pytest

from trapline.explain.singlestep import explain_singlestep, explain_stopall

pytestmark = pytest.mark.e2e


def _timeline(doc):
    return [i for i in doc["sections"][1]["items"] if i["kind"] == "event"]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_baseline_marks_a_lost_hit_inside_another_threads_window(arch):
    doc = explain_singlestep(arch)
    facts = doc["facts"]
    assert facts["output"] == "threads=2 calls=80" and facts["executions"] == 80
    assert facts["lost"] > 0 and facts["hits"] + facts["lost"] == facts["executions"]
    events = _timeline(doc)
    lost = next(n for n, e in enumerate(events) if e["lost"])
    window = max(n for n in range(lost) if events[n]["what"].startswith("#BP"))
    assert events[lost]["tid"] != events[window]["tid"]          # another thread's window
    assert events[lost]["site_bytes"] == events[window]["site_bytes"] != "cc"   # original there
    closing = next(e for e in events[lost:] if e["what"].startswith("#DB"))
    assert closing["tid"] == events[window]["tid"] and closing["site_bytes"] == "cc"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_stop_all_holds_the_others_and_sees_every_execution(arch):
    doc = explain_stopall(arch)
    facts = doc["facts"]
    assert facts["lost"] == 0 and facts["hits"] == facts["executions"] == 80
    assert facts["held_thread_insns"] > 0
    events = _timeline(doc)
    assert not any(e["lost"] for e in events)
    assert any(e["what"].startswith("#BP: tid 100, 102 held") for e in events)
