"""emu/block_stop.py: a stop asked from another host thread ends the run at the next block's
start, never inside a read-modify-write instruction (uc_emu_stop from that thread may end it
just after the store, and Unicorn resumes at the instruction: it runs twice); the stop is taken
by the run it ends, a withdrawn one ends none, and close takes the hooks away. Both arches,
the C hook and the Python one (where C cannot be built)."""
import threading
import time

import pytest
from unicorn import UC_MODE_32, UC_MODE_64

from emu import block_stop
from tests.unit.emu.block_stop_guest import CODE, counters, looping_machine, pc

MODES = pytest.mark.parametrize("mode", [UC_MODE_32, UC_MODE_64], ids=["i386", "x86_64"])
STOPS = 300


@pytest.fixture(params=["c", "python"])
def stops(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr(block_stop, "_library", lambda: None)
    else:       # gcc is on every machine trapline supports: a helper not built is a failure
        assert block_stop._library() is not None, block_stop.native.unavailable.get("block_stop")
    stop = block_stop.BlockStop()
    yield stop
    stop.close()


@MODES
def test_stops_asked_from_another_thread_land_at_a_block_start(stops, mode):
    machine = looping_machine(mode)
    runs, ended = 0, threading.Event()

    def ask_again_and_again():
        while not ended.is_set():
            stops.ask()
            time.sleep(0.0001)          # (the Python hook needs the GIL too)
    asker = threading.Thread(target=ask_again_and_again, daemon=True)
    asker.start()
    try:
        while runs < STOPS:                 # each run spins until a stop ends it
            stops.arm(machine)
            machine.uc.emu_start(pc(machine, mode), CODE + 0x100)
            runs += 1
            assert pc(machine, mode) == CODE          # the loop's block start, every time
    finally:
        ended.set()
        asker.join()
    memory, ecx = counters(machine)
    assert ecx > 0 and memory == ecx                  # no add ran twice


@MODES
def test_a_withdrawn_stop_ends_no_run_and_a_stop_is_taken_once(stops, mode):
    machine = looping_machine(mode)
    stops.arm(machine)
    stops.ask()
    stops.withdraw()
    machine.uc.emu_start(CODE, CODE + 0x100, 0, 1000)     # ended by its count, not the stop
    assert counters(machine)[1] > 300
    stops.ask()
    machine.uc.emu_start(CODE, CODE + 0x100, 0, 1000)     # ended at once, at the first block
    after_stop = counters(machine)[1]
    machine.uc.emu_start(CODE, CODE + 0x100, 0, 1000)     # taken: this one runs its count
    assert counters(machine)[1] - after_stop > 300


@MODES
def test_after_close_a_stop_ends_no_run(stops, mode):
    machine = looping_machine(mode)
    stops.arm(machine)
    stops.close()
    stops.ask()
    machine.uc.emu_start(CODE, CODE + 0x100, 0, 1000)
    assert counters(machine)[1] > 300
