"""decode(): the byte layout and operand facts relocation relies on, on both architectures."""
import pytest

from instrumenter.insn.decode import boundaries, canonical_register, decode
from instrumenter.errors import DecodeError, InstrumenterError


def test_rip_relative_load_has_its_displacement_located():
    insn = decode(bytes.fromhex("488b0510000000"), 0x401000, "x86_64")   # mov rax, [rip+0x10]
    assert (insn.mnemonic, insn.length, insn.rex) == ("mov", 7, 0x48)
    assert insn.rip_relative and insn.rip_target == 0x401017
    assert (insn.modrm_offset, insn.disp_offset, insn.disp_size) == (2, 3, 4)
    assert insn.opcode == b"\x8b" and insn.modrm == 0x05
    assert "rax" in insn.regs_written and "rip" in insn.regs_read


def test_immediate_after_rip_displacement_is_located_too():
    insn = decode(bytes.fromhex("48c7050100000002000000"), 0x1000, "x86_64")
    assert (insn.disp_offset, insn.imm_offset, insn.imm_size) == (3, 7, 4)


def test_relative_branch_target_is_absolute_and_wraps_on_i386():
    assert decode(b"\x74\x05", 0x1000, "x86_64").branch_target == 0x1007
    assert decode(b"\xe8\x00\x00\x00\x00", 0x8048000, "i386").branch_target == 0x8048005
    assert decode(bytes.fromhex("e9f0ffffff"), 0x0, "i386").branch_target == 0xFFFF_FFF5


def test_implicit_registers_are_canonical_full_width_names():
    mul = decode(bytes.fromhex("48f7e3"), 0, "x86_64")                     # mul rbx
    assert {"rax", "rbx"} <= mul.regs_read and {"rax", "rdx"} <= mul.regs_written
    assert mul.flags_undefined == 0x80 | 0x40 | 0x10 | 0x04               # SF ZF AF PF
    shl = decode(bytes.fromhex("d3e0"), 0, "i386")                          # shl eax, cl
    assert shl.uses("ecx") and shl.uses("eax") and not shl.uses("ebx")
    movs = decode(bytes.fromhex("f3a4"), 0, "x86_64")                       # rep movsb
    assert {"rsi", "rdi", "rcx"} <= movs.regs_written
    assert canonical_register("r9b", "x86_64") == "r9" and canonical_register("ah", "i386") == "eax"


def test_prefixes_and_base_mnemonic():
    insn = decode(bytes.fromhex("65ff1510000000"), 0, "i386")             # call gs:[0x10]
    assert insn.prefixes == (0x65,) and insn.memory_operand.segment == "gs"
    assert not insn.rip_relative                                           # absolute on i386
    assert decode(b"\xf3\xc3", 0, "x86_64").base_mnemonic == "ret"
    assert decode(bytes.fromhex("f0ff00"), 0, "x86_64").base_mnemonic == "inc"


def test_vex_prefix_is_recognised():
    insn = decode(bytes.fromhex("c5f8280510000000"), 0, "x86_64")         # vmovaps xmm0, [rip]
    assert insn.vex == 2 and insn.opcode == b"\x28" and insn.rip_relative
    les = decode(bytes.fromhex("c40510000000"), 0, "i386")                # les eax, [0x10]
    assert les.vex == 0 and les.mnemonic == "les"


@pytest.mark.parametrize("code,arch", [(b"\x48", "x86_64"), (b"", "i386"),
                                       (b"\x06", "x86_64"), (b"\xf0\x01\xc0", "x86_64")])
def test_truncated_or_invalid_bytes_raise_decode_error(code, arch):
    with pytest.raises(DecodeError) as info:
        decode(code, 0x1000, arch)
    assert isinstance(info.value, InstrumenterError) and "0x1000" in str(info.value)


def test_unknown_arch_and_out_of_range_address_are_refused():
    with pytest.raises(DecodeError):
        decode(b"\x90", 0, "arm")
    with pytest.raises(DecodeError):
        decode(b"\x90", 1 << 32, "i386")


def test_boundaries_sweep_a_function_body():
    body = bytes.fromhex("55" "4889e5" "488b0510000000" "5d" "c3")        # push/mov/mov/pop/ret
    assert boundaries(body, 0x1000, "x86_64") == [0x1000, 0x1001, 0x1004, 0x100B, 0x100C]
    assert boundaries(bytes.fromhex("5589e55dc3"), 0x8048000, "i386") == \
        [0x8048000, 0x8048001, 0x8048003, 0x8048004]


def test_boundaries_reject_a_body_that_ends_inside_an_instruction():
    with pytest.raises(DecodeError):
        boundaries(bytes.fromhex("55488b05"), 0x1000, "x86_64")
