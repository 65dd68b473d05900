"""Wherever a stop is asked, even inside the store of a read-modify-write instruction (where
uc_emu_stop may end a run, and Unicorn resumes at that instruction: it runs twice), a
BlockStop ends the run at the next block's start, after that instruction and the rest of its
block ran once each (emu/block_stop.py). Asked from a memory-write hook, deterministically, at
drawn stores of tests/unit/emu/block_stop_guest.py's loop; both arches, the C hook and the
Python one."""
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from unicorn import UC_HOOK_MEM_WRITE, UC_MODE_32, UC_MODE_64

from emu import block_stop
from tests.unit.emu.block_stop_guest import CODE, counters, looping_machine, pc

ROUNDS = 200


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from([UC_MODE_32, UC_MODE_64]), hook=st.sampled_from(["c", "python"]),
       stores=st.lists(st.integers(1, ROUNDS), min_size=1, max_size=6, unique=True))
def test_a_stop_asked_at_any_store_ends_the_run_after_its_block(mode, hook, stores):
    library = block_stop._library if hook == "c" else lambda: None
    with mock.patch.object(block_stop, "_library", library):
        stop = block_stop.BlockStop()
    assert (stop._stop is None) == (hook == "python")       # the hook drawn is the one tested
    machine = looping_machine(mode)
    written = 0

    def on_store(_uc, _access, _address, _size, _value, _user):
        nonlocal written
        written += 1
        if written in stores:
            stop.ask()                      # inside the add's store: the worst place
    machine.uc.hook_add(UC_HOOK_MEM_WRITE, on_store)
    try:
        for store in sorted(stores):
            stop.arm(machine)
            machine.uc.emu_start(pc(machine, mode), CODE + 0x100, 0, 3 * (ROUNDS + 1))
            # stopped at the loop's start, right after the round whose add asked: its add and
            # its `add ecx` ran once each, nothing of the next round ran
            assert (pc(machine, mode), counters(machine)) == (CODE, (store, store))
    finally:
        stop.close()
