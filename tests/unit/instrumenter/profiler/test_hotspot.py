"""The hot-spot decision (US 7,823,129 [0166]): threshold share per window, the top K when none
reaches it, re-evaluated every window, a function decided once stays decided."""
import pytest

from instrumenter.profiler.callers import FunctionId
from instrumenter.profiler.hotspot import HotSpotDetector

LEAF, MID, MAIN = (FunctionId("prog", name, 0x1000 * i) for i, name in enumerate(("leaf", "mid", "main"), 1))


def _feed(detector, functions):
    decided = []
    for function in functions:
        decided += detector.add(function)
    return decided


def test_a_function_reaching_the_threshold_is_hot_after_the_window():
    detector = HotSpotDetector(threshold=50, top=2, window=10)
    assert _feed(detector, [LEAF] * 6 + [MID] * 3) == []            # the window is not full yet
    (spot,) = detector.add(MAIN)
    assert (spot.function, spot.samples, spot.share, spot.by, spot.window) == (LEAF, 6, 60.0, "threshold", 1)


def test_when_none_reaches_the_threshold_the_top_k_are_hot():
    detector = HotSpotDetector(threshold=90, top=2, window=10)
    spots = _feed(detector, [MID] * 3 + [LEAF] * 4 + [MAIN] * 2 + [None])
    assert [(s.function, s.samples, s.by) for s in spots] == [(LEAF, 4, "top"), (MID, 3, "top")]


def test_every_window_is_decided_again_and_old_hot_spots_stay_decided():
    detector = HotSpotDetector(threshold=50, top=1, window=4)
    first = _feed(detector, [LEAF] * 4)
    second = _feed(detector, [LEAF, MID, MID, MID])                 # the phase changed
    third = _feed(detector, [LEAF] * 4)
    assert [s.function for s in first] == [LEAF]
    assert [(s.function, s.window) for s in second] == [(MID, 2)]
    assert third == [] and list(detector.decided) == [LEAF, MID] and detector.windows == 3


def test_unnamed_code_and_excluded_names_are_never_hot():
    start = FunctionId("prog", "_start_c", 0x9000)
    detector = HotSpotDetector(threshold=10, top=3, window=5, exclude=frozenset({"_start_c"}))
    assert _feed(detector, [None, None, start, start, None]) == []


@pytest.mark.parametrize("bad", [dict(window=0), dict(threshold=0), dict(threshold=101), dict(top=0)])
def test_bad_settings_are_refused(bad):
    settings = dict(threshold=10, top=1, window=5) | bad
    with pytest.raises(ValueError):
        HotSpotDetector(**settings)
