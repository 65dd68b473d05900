"""Hypothesis: no byte-level corruption of a valid ELF makes the loader raise anything but LoaderError."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.elf import detect_arch, load_elf
from loader.errors import LoaderError
from loader.image import LoadedImage
from tests.unit.loader.elf_builder import ET_DYN, build_elf

VALID = {
    (32, "exec"): build_elf(32).bytes(),
    (64, "exec"): build_elf(64).bytes(),
    (64, "pie"): build_elf(64, etype=ET_DYN).bytes(),
    (32, "pie"): build_elf(32, etype=ET_DYN).bytes(),
}
HEADER_AREA = 0x200  # ELF header and program headers: where a flipped byte changes the most


@st.composite
def corrupted_elf(draw) -> bytes:
    data = bytearray(VALID[draw(st.sampled_from(sorted(VALID)))])
    for _ in range(draw(st.integers(1, 8))):
        limit = HEADER_AREA if draw(st.booleans()) else len(data)
        offset = draw(st.integers(0, limit - 1))
        chunk = draw(st.binary(min_size=1, max_size=8))
        data[offset:offset + len(chunk)] = chunk
    if draw(st.integers(0, 4)) == 0:
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted_elf())
def test_corruption_never_escapes_as_another_exception(data):
    try:
        image = load_elf(data)
    except LoaderError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    # What loads is still internally consistent.
    assert isinstance(image, LoadedImage)
    assert image.segments and all(len(seg.data) == seg.filesz <= seg.memsz for seg in image.segments)
    ends = [(seg.vaddr, seg.vaddr + seg.memsz) for seg in image.segments]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(ends, ends[1:]))


@settings(max_examples=200, deadline=None)
@given(corrupted_elf())
def test_detect_arch_never_raises(data):
    assert detect_arch(data) in (None, "i386", "x86_64")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_after_the_magic_are_rejected_cleanly(data):
    # A valid executable needs agreeing class, machine, type, phentsize, PT_LOADs and entry:
    # random bytes never provide all of them, so this must always be a clean LoaderError.
    with pytest.raises(LoaderError):
        load_elf(b"\x7fELF" + data)
