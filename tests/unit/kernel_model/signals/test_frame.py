"""kernel_model/signals/frame.py: Linux's signal frame layouts (arch/x86/include/asm/sigframe.h)
at Linux's sizes and offsets, and every frame read back by sigreturn's parser as it was built."""
import struct

from hypothesis import given
from hypothesis import strategies as st

from kernel_model.signals import frame as F

U32, U64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)


def test_the_structures_have_linux_sizes():
    # struct sigcontext: 256 bytes on x86-64, 88 on i386 (uapi/asm/sigcontext.h)
    assert (F.SC64.size, F.SC32.size) == (256, 88)
    # x86-64 rt_sigframe: pretcode 8 + ucontext 304 + siginfo 128
    assert (F.RT64_INFO_OFFSET, F.RT64_SIZE) == (8 + 304, 440)
    # i386 rt_sigframe: pretcode, sig, pinfo, puc, siginfo 128, ucontext 116, retcode 8
    assert (F.RT32_INFO_OFFSET, F.RT32_UC_OFFSET, F.RT32_SIZE) == (16, 144, 268)
    # i386 sigframe: pretcode, sig, sigcontext 88, fpstate_unused 624, extramask 4, retcode 8
    assert (F.SF32_EXTRAMASK_OFFSET, F.SF32_SIZE) == (8 + 88 + 624, 732)


def test_siginfo_places_the_union_after_an_aligned_head():
    info64 = F.pack_siginfo(8, 11, 1, addr=0xdeadbeef000)
    info32 = F.pack_siginfo(4, 17, 1, pid=101, status=7)
    assert len(info64) == len(info32) == F.SIGINFO_SIZE
    assert struct.unpack_from("<iiiiQ", info64) == (11, 0, 1, 0, 0xdeadbeef000)   # si_addr at 16
    assert struct.unpack_from("<iiiiIi", info32) == (17, 0, 1, 101, 0, 7)   # si_pid, uid, status


def _regs(names, values, pc, flags, mask, fpstate, segs):
    return F.SavedRegisters(gpr=dict(zip(names, values)), pc=pc, flags=flags, segs=segs,
                            mask=mask, fpstate=fpstate)


@given(st.lists(U64, min_size=16, max_size=16), U64, U64, U64, U64)
def test_rt_frame64_round_trips(values, pc, flags, mask, fpstate):
    regs = _regs(F.SC64_GPRS, values, pc, flags, mask, fpstate, {"cs": 0x33, "ss": 0x2B})
    raw = F.build_rt_frame64(regs, F.pack_siginfo(8, 10, 0), 0x401000, (0, 2, 0))
    assert len(raw) == F.RT64_SIZE
    assert struct.unpack_from("<Q", raw)[0] == 0x401000          # pretcode: sa_restorer
    assert struct.unpack_from("<Q", raw, 8)[0] == F.UC_FLAGS64
    assert F.parse_rt_frame64(raw) == regs


@given(st.lists(U32, min_size=8, max_size=8), U32, U32, U64, U32, U32)
def test_rt_frame32_round_trips_and_carries_its_pointers(values, pc, flags, mask, fpstate, base):
    segs = {"gs": 0x33, "fs": 0, "es": 0x7B, "ds": 0x7B, "cs": 0x73, "ss": 0x7B}
    regs = _regs(F.SC32_GPRS, values, pc, flags, mask, fpstate, segs)
    raw = F.build_rt_frame32(base, 34, regs, F.pack_siginfo(4, 34, -6), 0, (0, 2, 0))
    assert len(raw) == F.RT32_SIZE
    # no sa_restorer: pretcode is the retcode at the frame's end (mov $173, %eax; int $0x80)
    pretcode, sig, pinfo, puc = struct.unpack_from("<IiII", raw)
    assert (pretcode, sig) == (base + F.RT32_SIZE - 8, 34)
    assert (pinfo, puc) == (base + F.RT32_INFO_OFFSET, base + F.RT32_UC_OFFSET)
    assert raw[-8:] == F.RETCODE_RT32
    assert F.parse_rt_frame32(raw) == regs


@given(st.lists(U32, min_size=8, max_size=8), U32, U32, U64, U32)
def test_old_frame32_keeps_the_mask_high_half_in_extramask(values, pc, flags, mask, fpstate):
    segs = {"gs": 0, "fs": 0, "es": 0x7B, "ds": 0x7B, "cs": 0x73, "ss": 0x7B}
    regs = _regs(F.SC32_GPRS, values, pc, flags, mask, fpstate, segs)
    pieces = F.build_frame32(0xbfff0000, 2, regs, 0x8049000)
    # fpstate_unused is never written: the pieces leave it to what the stack held
    raw = bytearray(b"\xAA" * F.SF32_SIZE)
    for offset, data in pieces:
        raw[offset:offset + len(data)] = data
    assert raw[F.SF32_UNUSED_OFFSET:F.SF32_EXTRAMASK_OFFSET] == b"\xAA" * F.FPSTATE32_SIZE
    assert struct.unpack_from("<I", raw, F.SF32_EXTRAMASK_OFFSET)[0] == mask >> 32
    assert bytes(raw[-8:]) == F.RETCODE32
    assert F.parse_frame32(bytes(raw)) == regs
