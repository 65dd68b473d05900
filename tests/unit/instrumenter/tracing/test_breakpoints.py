"""The breakpoint store's backpatching (seed 002 FIG. 6-8): the original bytes go back
byte-exactly, the list of what was restored is kept, and re-insertion gives back the
instrumented image byte for byte; a fork child's copy is cleaned without touching the parent.
"""
from types import SimpleNamespace

import pytest

from emu.machine import Machine
from instrumenter.tracing.breakpoints import BreakpointStore
from kernel_model.debug import DebugInterface

CODE = 0x40_0000
ORIGINAL = bytes((0x40 + i) & 0x7F for i in range(0x100))   # no 0xcc, 0xe9, 0xf0 in it
ARCHES = ("i386", "x86_64")


def _process(arch: str, data: bytes = ORIGINAL):
    machine = Machine(arch)
    machine.mem.map(CODE, 0x1000, 7)
    machine.mem.write(CODE, data)
    return SimpleNamespace(machine=machine, pid=1, space=SimpleNamespace(machine=machine, serial=1))


def _patched_store(arch: str):
    debug = DebugInterface()
    process = _process(arch)
    store = BreakpointStore(debug, process)
    store.insert(CODE + 0x10, b"\xcc", "p1")
    store.insert(CODE + 0x20, b"\xe9\x00\x01\x00\x00\xcc", "jump")       # a 5-byte jump + tail
    store.insert(CODE + 0x40, b"\xf0", "lock")
    store.insert(CODE + 0x10, b"\xcc", "p2")                           # a shared site
    return debug, process, store


def _code(process) -> bytes:
    return process.machine.mem.read(CODE, len(ORIGINAL))


@pytest.mark.parametrize("arch", ARCHES)
def test_backpatch_restores_every_original_byte_and_lists_the_sites(arch):
    _, process, store = _patched_store(arch)
    assert _code(process) != ORIGINAL
    restored = store.backpatch()
    assert restored == [CODE + 0x10, CODE + 0x20, CODE + 0x40]
    assert store.backpatched == restored and store.suspended
    assert _code(process) == ORIGINAL
    assert store.original_bytes(CODE, len(ORIGINAL)) == ORIGINAL
    assert store.backpatch() == []          # nothing more to restore while suspended


@pytest.mark.parametrize("arch", ARCHES)
def test_reinsert_gives_back_the_instrumented_image_byte_for_byte(arch):
    _, process, store = _patched_store(arch)
    instrumented = _code(process)
    store.backpatch()
    assert store.reinsert() == [CODE + 0x10, CODE + 0x20, CODE + 0x40]
    assert _code(process) == instrumented
    assert store.backpatched == [] and not store.suspended
    assert store.reinsert() == []


@pytest.mark.parametrize("arch", ARCHES)
def test_a_site_removed_while_backpatched_leaves_the_list(arch):
    _, process, store = _patched_store(arch)
    store.backpatch()
    store.remove(CODE + 0x40, "lock")
    assert CODE + 0x40 not in store.backpatched
    store.reinsert()
    code = _code(process)
    assert code[0x40] == ORIGINAL[0x40] and code[0x10] == 0xCC and code[0x20] == 0xE9


@pytest.mark.parametrize("arch", ARCHES)
def test_a_site_placed_while_backpatched_is_patched_only_at_reinsert(arch):
    _, process, store = _patched_store(arch)
    store.backpatch()
    store.insert(CODE + 0x80, b"\xcc", "late")
    assert _code(process) == ORIGINAL
    assert CODE + 0x80 in store.reinsert()
    assert _code(process)[0x80] == 0xCC


@pytest.mark.parametrize("arch", ARCHES)
def test_clean_copy_restores_the_child_and_keeps_the_parent_patched(arch):
    _, parent, store = _patched_store(arch)
    instrumented = _code(parent)
    child = _process(arch, instrumented)              # fork: a copy of the patched memory
    assert store.clean_copy(child) == [CODE + 0x10, CODE + 0x20, CODE + 0x40]
    assert _code(child) == ORIGINAL
    assert _code(parent) == instrumented
