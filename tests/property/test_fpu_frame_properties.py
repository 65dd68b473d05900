"""Random x87/SSE register values survive a signal round trip bit for bit.

Guest level: the program of tests/unit/kernel_model/signals/fpu_frame_guest.py loads a drawn FXSAVE image
(control, status and tag words, MXCSR, eight 80-bit registers, every XMM register), takes a
signal whose handler computes with both units and wrecks them, and dumps its state after
sigreturn. Model level: kernel_model/signals/fpframe.py writes any state into a frame and reads the
same state back, on both frame layouts."""
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emu.fpu import FpuState
from kernel_model.signals.fpframe import (RestoreError, fpstate_pieces, math_frame, restore_fpstate)
from tests.unit.kernel_model.signals.fpu_frame_guest import compared_fields, image_of, write_fpu_program
from tests.unit.kernel_model.signals.test_fpu_state import run_in_trapline

ARCHES = ("i386", "x86_64")


@st.composite
def fxsave_images(draw, arch: str) -> bytes:
    xmm_count = 16 if arch == "x86_64" else 8
    return image_of(draw(st.integers(0, 0xFFFF)) & 0x0F3F | 0x40, draw(st.integers(0, 0xFFFF)),
                    draw(st.integers(0, 0xFF)), draw(st.integers(0, 0xFFFF)),
                    [draw(st.binary(min_size=10, max_size=10)) for _ in range(8)],
                    [draw(st.binary(min_size=16, max_size=16)) for _ in range(xmm_count)])


@pytest.mark.parametrize("arch", ARCHES)
def test_registers_survive_a_signal_bit_for_bit(tmp_path_factory, arch):
    folder = tmp_path_factory.mktemp(f"fpu-{arch}")
    bits = 64 if arch == "x86_64" else 32

    @given(fxsave_images(arch))
    def round_trip(image):
        status, out = run_in_trapline(write_fpu_program(folder, arch, image))
        assert status == 0
        assert compared_fields(out, bits) == compared_fields(image, bits)

    round_trip()


@st.composite
def fpu_states(draw, bits: int) -> FpuState:
    """Any state, with what the formats keep: the tag word says empty (11b) or not (00b, as
    FXRSTOR only keeps that); 64-bit frames keep FIP/FDP whole and no selectors."""
    u16, u32 = st.integers(0, 0xFFFF), st.integers(0, 0xFFFFFFFF)
    empty = draw(st.integers(0, 0xFF))
    ftw = sum(3 << (2 * i) for i in range(8) if empty >> i & 1)
    wide = bits == 64
    return FpuState(fcw=draw(u16), fsw=draw(u16), ftw=ftw, fop=draw(st.integers(0, 0x7FF)),
                    fip=draw(st.integers(0, 2**64 - 1) if wide else u32), fcs=0 if wide else draw(u16),
                    fdp=draw(st.integers(0, 2**64 - 1) if wide else u32), fds=0 if wide else draw(u16),
                    mxcsr=draw(u16),
                    regs=tuple((draw(st.integers(0, 2**64 - 1)), draw(u16)) for _ in range(8)),
                    xmm=tuple(draw(st.integers(0, 2**128 - 1)) for _ in range(16 if wide else 8)))


def _frame_memory(pieces, lo: int, hi: int) -> SimpleNamespace:
    memory = bytearray(b"\xa5" * (hi - lo))          # what the stack held before
    for addr, data in pieces:
        memory[addr - lo:addr - lo + len(data)] = data

    def read(addr: int, size: int) -> bytes:
        if not (lo <= addr and addr + size <= hi):
            raise RestoreError("not readable")
        return bytes(memory[addr - lo:addr - lo + size])
    return SimpleNamespace(read=read, memory=memory)


@pytest.mark.parametrize("bits", (32, 64))
@given(data=st.data())
def test_any_state_round_trips_through_the_frame(bits, data):
    state = data.draw(fpu_states(bits))
    sp = 0x7000_0000 - data.draw(st.integers(0, 4095))
    fpstate, buf_fx = math_frame(sp, ia32=bits == 32)
    frame = _frame_memory(fpstate_pieces(state, fpstate, buf_fx, bits), fpstate, sp)
    assert buf_fx % 64 == 0
    assert restore_fpstate(frame.read, fpstate, bits, ia32=bits == 32) == state
