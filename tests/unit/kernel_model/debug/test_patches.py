"""The door's table of tool patches (kernel_model/debug/patches.py): reads through the door
show the original bytes, writes into a patched range update them and keep the patch; sites are
shared by owners; backpatching (US 7,185,320 FIG. 6-8) restores byte-exactly and re-insertion gives
back the instrumented image; a fork child gets a copy of the table, a released space none.
"""
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from emu.machine import Machine
from kernel_model.debug import DebugInterface, PatchConflict
from kernel_model.errors import KernelError

CODE = 0x40_0000
ORIGINAL = bytes((0x40 + i) & 0x7F for i in range(0x100))   # no 0xcc, 0xe9, 0xf0 in it
ARCHES = ("i386", "x86_64")
_serials = iter(range(1, 1 << 30))


def _process(arch: str, data: bytes = ORIGINAL):
    machine = Machine(arch)
    machine.mem.map(CODE, 0x1000, 7)
    machine.mem.write(CODE, data)
    return SimpleNamespace(pid=1, space=SimpleNamespace(machine=machine, serial=next(_serials)))


def _patched(arch: str):
    debug = DebugInterface()
    process = _process(arch)
    debug.patch(process, CODE + 0x10, b"\xcc", "p1")
    debug.patch(process, CODE + 0x20, b"\xe9\x00\x01\x00\x00\xcc", "jump")   # a 5-byte jump + tail
    debug.patch(process, CODE + 0x40, b"\xf0", "lock")
    debug.patch(process, CODE + 0x10, b"\xcc", "p2")                         # a shared site
    return debug, process


def _code(process) -> bytes:
    return process.space.machine.mem.read(CODE, len(ORIGINAL))


@pytest.mark.parametrize("arch", ARCHES)
def test_reads_through_the_door_show_the_original_bytes_and_raw_reads_the_patches(arch):
    debug, process = _patched(arch)
    assert debug.read_memory(process, CODE, len(ORIGINAL)) == ORIGINAL
    assert debug.read_memory(process, CODE + 0x22, 2) == ORIGINAL[0x22:0x24]   # inside a jump
    raw = debug.read_memory_raw(process, CODE, len(ORIGINAL))
    assert raw == _code(process) and raw[0x10] == 0xCC and raw[0x20:0x26] == b"\xe9\0\1\0\0\xcc"


@pytest.mark.parametrize("arch", ARCHES)
def test_a_write_into_a_patched_range_updates_the_original_and_keeps_the_patch(arch):
    debug, process = _patched(arch)
    debug.write_memory(process, CODE + 0x1E, b"ABCDEFGH")          # over the jump's first bytes
    assert debug.read_memory(process, CODE + 0x1E, 8) == b"ABCDEFGH"
    assert _code(process)[0x1E:0x26] == b"AB\xe9\x00\x01\x00\x00\xcc"
    assert debug.patch_at(process, CODE + 0x20).original == b"CDEFGH"
    debug.unpatch(process, CODE + 0x20, "jump")                     # the new bytes come back
    assert _code(process)[0x1E:0x26] == b"ABCDEFGH"


@pytest.mark.parametrize("arch", ARCHES)
def test_owners_share_a_site_and_the_last_one_restores_it(arch):
    debug, process = _patched(arch)
    assert debug.unpatch(process, CODE + 0x10, "p1") is False
    assert _code(process)[0x10] == 0xCC
    assert debug.unpatch(process, CODE + 0x10, "p2") is True
    assert _code(process)[0x10] == ORIGINAL[0x10]
    with pytest.raises(KernelError):
        debug.unpatch(process, CODE + 0x10, "p2")


@pytest.mark.parametrize("arch", ARCHES)
def test_conflicting_patches_are_refused_and_nothing_is_written(arch):
    debug, process = _patched(arch)
    before = _code(process)
    with pytest.raises(PatchConflict, match="already patched differently"):
        debug.patch(process, CODE + 0x10, b"\xf0", "other")
    with pytest.raises(PatchConflict, match="overlaps the patch at 0x400020"):
        debug.patch(process, CODE + 0x23, b"\xcc", "other")
    with pytest.raises(PatchConflict, match="overlaps"):
        debug.patch(process, CODE + 0x1C, b"\xe9\0\0\0\0", "other")
    assert _code(process) == before


@pytest.mark.parametrize("arch", ARCHES)
def test_repatch_re_aims_a_site_in_place(arch):
    debug, process = _patched(arch)
    debug.repatch(process, CODE + 0x20, b"\xe9\x10\x00\x00\x00\xcc", "part2")
    assert _code(process)[0x20:0x26] == b"\xe9\x10\x00\x00\x00\xcc"
    assert debug.patch_at(process, CODE + 0x20).owners == ["jump", "part2"]
    with pytest.raises(PatchConflict):
        debug.repatch(process, CODE + 0x20, b"\xcc", "part3")


@pytest.mark.parametrize("arch", ARCHES)
def test_backpatch_restores_every_original_byte_and_lists_the_sites(arch):
    debug, process = _patched(arch)
    assert _code(process) != ORIGINAL
    restored = debug.backpatch(process)
    assert restored == [CODE + 0x10, CODE + 0x20, CODE + 0x40] and debug.is_backpatched(process)
    assert _code(process) == ORIGINAL
    assert debug.read_memory(process, CODE, len(ORIGINAL)) == ORIGINAL
    assert debug.backpatch(process) == []          # nothing more to restore while suspended


@pytest.mark.parametrize("arch", ARCHES)
def test_reinsert_gives_back_the_instrumented_image_byte_for_byte(arch):
    debug, process = _patched(arch)
    instrumented = _code(process)
    debug.backpatch(process)
    assert debug.reinsert_patches(process) == [CODE + 0x10, CODE + 0x20, CODE + 0x40]
    assert _code(process) == instrumented and not debug.is_backpatched(process)
    assert debug.reinsert_patches(process) == []


@pytest.mark.parametrize("arch", ARCHES)
def test_a_site_removed_while_backpatched_leaves_the_list(arch):
    debug, process = _patched(arch)
    debug.backpatch(process)
    debug.unpatch(process, CODE + 0x40, "lock")
    assert CODE + 0x40 not in debug.reinsert_patches(process)
    code = _code(process)
    assert code[0x40] == ORIGINAL[0x40] and code[0x10] == 0xCC and code[0x20] == 0xE9


@pytest.mark.parametrize("arch", ARCHES)
def test_a_site_placed_while_backpatched_is_patched_only_at_reinsert(arch):
    debug, process = _patched(arch)
    debug.backpatch(process)
    debug.patch(process, CODE + 0x80, b"\xcc", "late")
    assert _code(process) == ORIGINAL
    assert CODE + 0x80 in debug.reinsert_patches(process)
    assert _code(process)[0x80] == 0xCC


@pytest.mark.parametrize("arch", ARCHES)
def test_a_lifted_site_shows_its_original_until_it_is_relaid(arch):
    debug, process = _patched(arch)
    debug.lift_patch(process, CODE + 0x10)
    assert _code(process)[0x10] == ORIGINAL[0x10]
    debug.write_memory(process, CODE + 0x10, b"\x90")             # lifted: memory gets it
    assert _code(process)[0x10] == 0x90 and debug.read_memory(process, CODE + 0x10, 1) == b"\x90"
    debug.relay_patch(process, CODE + 0x10)
    assert _code(process)[0x10] == 0xCC
    assert debug.read_memory(process, CODE + 0x10, 1) == b"\x90"


@pytest.mark.parametrize("arch", ARCHES)
def test_a_fork_child_gets_a_copy_of_the_table_and_cleaning_it_leaves_the_parent(arch):
    debug, parent = _patched(arch)
    instrumented = _code(parent)
    child = _process(arch, instrumented)              # fork: a copy of the patched memory
    debug.copy_breakpoints(parent.space, child.space)
    assert debug.read_memory(child, CODE, len(ORIGINAL)) == ORIGINAL
    debug.unpatch(child, CODE + 0x40, "lock")         # the child's own table
    assert debug.patch_at(parent, CODE + 0x40) is not None
    assert debug.remove_all_patches(child) == [CODE + 0x10, CODE + 0x20]
    assert _code(child) == ORIGINAL and _code(parent) == instrumented
    assert not debug.has_patches(child) and debug.has_patches(parent)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_released_space_is_forgotten(arch):
    debug, process = _patched(arch)
    debug.space_released(process.space)
    assert debug.patch_at(process, CODE + 0x10) is None and not debug.has_patches(process)


# ---- the property: reads through the door are the unpatched image with the writes applied --
SPAN = 0x80
_PATCH_BYTES = st.sampled_from([b"\xcc", b"\xf0", b"\xe9\x01\x02\x03\x04", b"\xe9\x05\x06\x07\x08\xcc\xcc"])
_operations = st.lists(st.one_of(
    st.tuples(st.just("patch"), st.integers(0, SPAN - 8), _PATCH_BYTES, st.sampled_from("ab")),
    st.tuples(st.just("unpatch"), st.integers(0, SPAN - 1), st.sampled_from("ab")),
    st.tuples(st.just("write"), st.integers(0, SPAN - 8), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("backpatch")), st.tuples(st.just("reinsert")),
    st.tuples(st.just("lift"), st.integers(0, SPAN - 1)),
    st.tuples(st.just("relay"), st.integers(0, SPAN - 1)),
), min_size=1, max_size=30)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(arch=st.sampled_from(ARCHES), operations=_operations)
def _reads_equal_the_unpatched_image(applied, arch, operations):
    debug, process = DebugInterface(), _process(arch)
    image = bytearray(ORIGINAL)                       # what the program would hold, unprobed
    for operation in operations:
        kind, *args = operation
        note(repr(operation))
        if kind == "patch":
            offset, data, owner = args
            try:
                debug.patch(process, CODE + offset, data, owner)
                applied["patch"] += 1
            except PatchConflict:
                pass
        elif kind == "unpatch":
            site = debug.patch_at(process, CODE + args[0])
            if site is not None and args[1] in site.owners:
                debug.unpatch(process, CODE + args[0], args[1])
        elif kind == "write":
            offset, data = args
            debug.write_memory(process, CODE + offset, data)
            image[offset:offset + len(data)] = data
            applied["write"] += 1
        elif kind == "backpatch":
            debug.backpatch(process)
        elif kind == "reinsert":
            debug.reinsert_patches(process)
        elif debug.patch_at(process, CODE + args[0]) is not None:
            (debug.lift_patch if kind == "lift" else debug.relay_patch)(process, CODE + args[0])
        assert debug.read_memory(process, CODE, len(ORIGINAL)) == bytes(image)
    # What the CPU sees: each site's patch where it is in place, the image everywhere else.
    expected = bytearray(image)
    for address in debug.patched_addresses(process):
        site = debug.patch_at(process, address)
        if not site.lifted and not debug.is_backpatched(process):
            expected[address - CODE:site.end - CODE] = site.patch
    assert _code(process) == bytes(expected)
    debug.backpatch(process)
    for address in debug.patched_addresses(process):
        for owner in list(debug.patch_at(process, address).owners):
            debug.unpatch(process, address, owner)
    assert _code(process) == bytes(image)


def test_reads_through_the_door_equal_the_unpatched_image_with_the_writes():
    """Random patches, unpatches, writes, backpatches and lifts; a floor on the patches and
    writes that took effect keeps the property from passing vacuously."""
    applied = {"patch": 0, "write": 0}
    _reads_equal_the_unpatched_image(applied)
    assert applied["patch"] >= 20 and applied["write"] >= 20, applied
