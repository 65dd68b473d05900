"""The load-time checks of a seccomp filter (net/core/filter.c bpf_check_classic, kernel/seccomp.c
seccomp_check_filter: each refusal is EINVAL) and the interpreter's corner cases."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.seccomp import cbpf as B
from kernel_model.seccomp.data import seccomp_data


def insn(code, k=0, jt=0, jf=0) -> bytes:
    return B.INSN.pack(code, jt, jf, k)


RET_A, RET_K = B.RET | B.A_SRC, B.RET | B.K
REFUSED = {
    "empty": b"",
    "too long": insn(RET_K) * (B.BPF_MAXINSNS + 1),
    "unknown code": insn(0xFFFF) + insn(RET_K),
    "division by a constant 0": insn(B.ALU | B.DIV | B.K, 0) + insn(RET_A),
    "shift by 32": insn(B.ALU | B.LSH | B.K, 32) + insn(RET_A),
    "scratch slot 16": insn(B.ST, 16) + insn(RET_A),
    "jump past the end": insn(B.JMP | B.JA, 1) + insn(RET_A),
    "conditional past the end": insn(B.JMP | B.JEQ | B.K, 0, 0, 1) + insn(RET_A),
    "no RET last": insn(B.LD | B.W | B.ABS, 0),
    "slot read unstored": insn(B.LD | B.MEM, 3) + insn(RET_A),
    # stored on one path only: the jump's target does not have it
    "slot stored on one path": insn(B.JMP | B.JEQ | B.K, 0, 1, 0) + insn(B.ST, 2)
    + insn(B.LD | B.MEM, 2) + insn(RET_A),
    # seccomp's narrowing of classic BPF
    "MOD": insn(B.ALU | B.MOD | B.K, 3) + insn(RET_A),
    "half-word load": insn(B.LD | B.H | B.ABS, 0) + insn(RET_A),
    "unaligned load": insn(B.LD | B.W | B.ABS, 2) + insn(RET_A),
    "load past seccomp_data": insn(B.LD | B.W | B.ABS, 64) + insn(RET_A),
    "indirect load": insn(B.LD | B.W | B.IND, 0) + insn(RET_A),
    "MSH": insn(B.LDX | B.B | B.MSH, 0) + insn(RET_A),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_filter_breaking_a_rule_is_refused(name):
    with pytest.raises(GuestErrno) as refused:
        B.check_filter(REFUSED[name])
    assert refused.value.errno == E.EINVAL


def test_a_slot_stored_on_every_path_may_be_read():
    program = B.check_filter(insn(B.ST, 2) + insn(B.JMP | B.JEQ | B.K, 0, 1, 0) + insn(B.ST, 2)
                             + insn(B.LD | B.MEM, 2) + insn(RET_A))
    assert B.run(program, bytes(64)) == 0


def test_the_packet_length_is_the_size_of_seccomp_data():
    for load in (insn(B.LD | B.W | B.LEN), insn(B.LDX | B.W | B.LEN) + insn(B.MISC | B.TXA)):
        assert B.run(B.check_filter(load + insn(RET_A)), bytes(64)) == 64


def test_a_division_by_x_zero_returns_zero_and_shifts_by_x_keep_five_bits():
    divide = B.check_filter(insn(B.LD | B.IMM, 7) + insn(B.LDX | B.IMM, 0)
                            + insn(B.ALU | B.DIV | B.X) + insn(RET_K, 0x7FFF0000))
    assert B.run(divide, bytes(64)) == 0
    shift = B.check_filter(insn(B.LD | B.IMM, 1) + insn(B.LDX | B.IMM, 33)
                           + insn(B.ALU | B.LSH | B.X) + insn(RET_A))
    assert B.run(shift, bytes(64)) == 2


@pytest.mark.parametrize("abi,arch", [("x86_64", 0xC000003E), ("i386", 0x40000003)])
def test_seccomp_data_holds_the_call_as_the_filter_reads_it(abi, arch):
    data = seccomp_data(abi, 39, 0x401000, (1, 2, 3, 4, 5, 1 << 40))
    assert len(data) == 64
    assert struct.unpack_from("<iIQ", data) == (39, arch, 0x401000)
    assert struct.unpack_from("<II", data, 16 + 5 * 8) == (0, 1 << 8)     # args[5]: lo, hi
