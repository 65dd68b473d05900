"""The captured ticks are handed over with the cyclic collector paused (kernel_model/time/
collector_pause.py): a batch of records that a tool keeps sets off no collection in its middle,
and the collector is on again after."""
import gc
from pathlib import Path

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.time.collector_pause import collector_paused

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"
KEPT_A_TICK = 4            # containers the tool below keeps per tick: 1 000 ticks pass 700 many times


class Keeper:
    """Keeps containers for every tick, as a profile keeps its Samples, and counts the
    collections that start while it is handed a batch."""

    def __init__(self):
        self.kept, self.batches, self.collections_inside = [], [], 0
        self._inside = False

    def timer_tick_batch(self, thread, frames):
        self._inside = True
        try:
            self.batches.append(len(frames))
            for frame in frames:
                self.kept.append([[frame.ip] for _ in range(KEPT_A_TICK)])
        finally:
            self._inside = False

    def on_collection(self, phase, info):
        if phase == "start" and self._inside:
            self.collections_inside += 1


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_batch_of_captured_ticks_sets_off_no_collection(arch):
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out))
    proc = kernel.spawn(str(SAMPLES / arch / "fib").encode(), [b"fib", b"22"], [])
    keeper = Keeper()
    kernel.debug.subscribe(keeper)
    kernel.debug.arm_timer(300, capture="pc")
    gc.callbacks.append(keeper.on_collection)
    was = gc.isenabled()
    gc.enable()                    # (the test pins the collector: on, its default)
    try:
        assert kernel.run(proc) == 0
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(keeper.on_collection)
        if not was:
            gc.disable()
    if not kernel.debug.timer_capturing():
        pytest.fail("no C compiler for the tick capture")
    # the interesting case: batches whose kept containers pass the youngest generation's threshold
    assert max(keeper.batches) * KEPT_A_TICK * 2 > 10 * gc.get_threshold()[0], keeper.batches
    assert keeper.collections_inside == 0


def test_the_collector_is_left_as_it_was():
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            with collector_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is state
    finally:
        (gc.enable if was else gc.disable)()
