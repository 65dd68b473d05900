"""relocate(): one hand-picked instruction per class and recipe, on both architectures —
the emitted bytes and exits, and what the relocated code does when it runs."""
import struct

import pytest

from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE
from emu.machine import Machine
from instrumenter.insn.decode import decode
from instrumenter.errors import InstrumenterError, RelocationRefused
from instrumenter.insn.policy import InsnClass
from instrumenter.insn.relocate import relocate

ORIG, STACK, DATA = 0x401000, 0x7000, 0x500000
NEAR, FAR = 0x402000, 0x7000_0000_0000
SP = 0x7800
RX, RW = PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE


def reloc(code: str, arch: str, new: int = NEAR, address: int = ORIG, **kw):
    return relocate(decode(bytes.fromhex(code), address, arch), new, arch, **kw)


def machine(arch: str, relocated) -> Machine:
    """Original page (the instruction amid int3), XOL page, stack and data pages."""
    m = Machine(arch)
    pages = ((relocated.insn.address & ~0xFFF, RX), (relocated.address & ~0xFFF, RX),
             (STACK, RW), (DATA, RW))
    for start, perms in pages:
        m.mem.map(start, 0x1000, perms)
        m.mem.write(start, b"\xcc" * 0x1000 if perms & PROT_EXEC else bytes(0x1000))
    m.mem.write(relocated.insn.address, relocated.insn.raw)
    m.mem.write(relocated.address, relocated.code)
    m.sp = SP
    return m


def test_plain_copy_then_jump_back():
    r = reloc("4889e5", "x86_64")                                   # mov rbp, rsp
    assert r.cls is InsnClass.PLAIN and r.method == "copy"
    assert r.code == bytes.fromhex("4889e5") + b"\xe9" + struct.pack("<i", 0x401003 - 0x402008)
    exits = [(e.address, e.target, e.kind) for e in r.exits]
    assert exits == [(0x402003, 0x401003, "fallthrough")]
    assert r.falls_through and r.length == 8


def test_plain_far_away_uses_an_absolute_jump_back():
    r = reloc("4889e5", "x86_64", new=FAR)
    assert r.code[3:9] == bytes.fromhex("ff2500000000") and r.code[9:] == struct.pack("<Q", 0x401003)


def test_i386_jump_back_wraps_around_the_address_space():
    r = reloc("90", "i386", new=0xFFFF_0000, address=0x1000)
    m = machine("i386", r)
    assert m.run(r.address).pc == 0x1001 + 1                       # the int3 after the nop


def test_rip_relative_near_gets_a_new_displacement_and_reads_the_same_data():
    r = reloc("488b0500f00f00", "x86_64")                           # mov rax, [rip+0xff000]
    assert r.method == "displacement"
    assert decode(r.code, NEAR, "x86_64").rip_target == 0x401007 + 0xFF000 == DATA + 7
    m = machine("x86_64", r)
    m.mem.write(DATA + 7, struct.pack("<Q", 0x1122334455667788))
    assert m.run(r.address).pc == 0x401007 + 1 and m.reg("rax") == 0x1122334455667788


def test_rip_relative_far_uses_a_scratch_register_and_spares_the_red_zone():
    r = reloc("48f72500f00f00", "x86_64", new=FAR)                 # mul qword [rip+0xff000]
    assert r.method == "scratch" and r.scratch == "rbx"             # not rax/rdx: mul uses them
    m = machine("x86_64", r)
    m.mem.write(DATA + 7, struct.pack("<Q", 3))
    m.mem.write(SP - 128, b"\xa5" * 128)                            # a leaf's red zone
    m.set_reg("rax", 5), m.set_reg("rbx", 0xB0B)
    assert m.run(r.address).pc == 0x401007 + 1
    assert (m.reg("rax"), m.reg("rdx"), m.reg("rbx"), m.sp) == (15, 0, 0xB0B, SP)
    assert m.mem.read(SP - 128, 128) == b"\xa5" * 128


def test_rip_relative_high_byte_register_keeps_its_meaning():
    r = reloc("8a2500f00f00", "x86_64", new=FAR)                    # mov ah, [rip+...]
    assert decode(r.code[r.code.index(b"\x8a"):], 0, "x86_64").op_str.startswith("ah, byte ptr [r")


def test_rip_relative_far_refusals():
    with pytest.raises(RelocationRefused, match="stack pointer") as info:
        reloc("ff3500f00f00", "x86_64", new=FAR)                    # push qword [rip+...]
    assert info.value.alternatives == ("singlestep",)
    with pytest.raises(RelocationRefused, match="scratch registers are not allowed"):
        reloc("488b0500f00f00", "x86_64", new=FAR, scratch_ok=False)
    assert reloc("488b0500f00f00", "x86_64", scratch_ok=False).method == "displacement"


@pytest.mark.parametrize("code,mnemonic", [("ff3500f00f00", "push"),        # push qword [rip+d]
                                            ("48892500f00f00", "mov")])    # mov [rip+d], rsp
def test_far_stack_using_operand_takes_the_two_trap_path_when_asked(code, mnemonic):
    """task_scratch=True (the trampoline strategy): `int3; insn through scratch; int3`, the
    copy addressing [scratch+0] with its length unchanged and the stack pointer untouched;
    the second trap's exit resumes at the next original instruction."""
    r = reloc(code, "x86_64", new=FAR, task_scratch=True)
    assert r.method == "task-scratch" and r.scratch not in (None, "rsp")
    assert r.code[0] == 0xCC and r.code[-1] == 0xCC and len(r.code) == r.insn.length + 2
    middle = decode(r.code[1:-1], r.address + 1, "x86_64")
    assert middle.base_mnemonic == mnemonic and f"[{r.scratch}]" in middle.op_str
    assert [(e.kind, e.address, e.target) for e in r.exits] == [
        ("task-scratch-restore", r.address + r.length - 1, r.insn.next_address)]
    near = reloc(code, "x86_64", task_scratch=True)                 # in reach: a displacement
    assert near.method == "displacement"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("zf,expected", [(0x40, 0x401010), (0, 0x401002)])
def test_jcc_rel8_both_outcomes_return_to_original_addresses(arch, zf, expected):
    r = reloc("740e", arch)                                         # je +0x0e
    assert {e.kind: e.target for e in r.exits} == {"taken": 0x401010, "fallthrough": 0x401002}
    m = machine(arch, r)
    m.set_reg("eflags" if arch == "i386" else "rflags", 0x2 | zf)
    assert m.run(r.address).pc == expected + 1


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("count,expected", [(2, 0x401010), (1, 0x401002)])
def test_loop_has_no_rel32_form_and_branches_over_the_fallthrough_jump(arch, count, expected):
    r = reloc("e20e", arch, new=FAR if arch == "x86_64" else NEAR)  # loop +0x0e
    assert r.code[:2] == bytes((0xE2, 5 if arch == "i386" else 14))
    m = machine(arch, r)
    m.set_reg("ecx", count)
    assert m.run(r.address).pc == expected + 1 and m.reg("ecx") == count - 1


@pytest.mark.parametrize("arch,new", [("i386", NEAR), ("x86_64", NEAR), ("x86_64", FAR)])
def test_get_pc_idiom_pushes_the_original_return_address(arch, new):
    r = reloc("e800000000", arch, new=new)                          # call $+5
    assert r.cls is InsnClass.CALL_REL and not r.falls_through
    assert [(e.target, e.kind) for e in r.exits] == [(0x401005, "call")]
    m = machine(arch, r)
    word = 4 if arch == "i386" else 8
    assert m.run(r.address).pc == 0x401005 + 1
    assert m.sp == SP - word and m.mem.read(SP - word, word) == (0x401005).to_bytes(word, "little")


def test_x86_64_return_address_above_2gib_is_stored_without_touching_flags():
    r = reloc("e800000000", "x86_64", new=0x7000_1000_0000, address=0x7000_0000_0000)
    assert r.code.startswith(bytes.fromhex("488d6424f8"))           # lea rsp, [rsp-8]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_call_through_the_stack_reads_the_target_before_the_push(arch):
    word = 4 if arch == "i386" else 8
    r = reloc("ff542408", arch)                                     # call [esp/rsp + 8]
    m = machine(arch, r)
    m.mem.write(SP + 8, (0x600000).to_bytes(word, "little"))
    exit_ = m.run(r.address)
    assert (exit_.kind, exit_.pc) == ("fault", 0x600000)
    assert m.sp == SP - word and m.mem.read(m.sp, word) == (0x401004).to_bytes(word, "little")


def test_far_rip_relative_call_and_jmp():
    for code, sp_after in (("ff1500f00f00", SP - 8), ("ff2500f00f00", SP)):
        r = reloc(code, "x86_64", new=FAR)
        assert r.method == "scratch" and not r.exits
        m = machine("x86_64", r)
        m.mem.write(DATA + 6, struct.pack("<Q", 0x600000))
        m.set_reg("rbx", 0xB0B)
        assert m.run(r.address).pc == 0x600000
        assert (m.sp, m.reg("rbx")) == (sp_after, 0xB0B)
        if sp_after != SP:
            assert m.mem.read(m.sp, 8) == struct.pack("<Q", 0x401006)


def test_ret_and_register_jumps_are_copied():
    assert reloc("c20800", "i386").code == bytes.fromhex("c20800")
    assert reloc("3effe0", "x86_64").code == bytes.fromhex("3effe0")


@pytest.mark.parametrize("arch,code,alternatives", [
    ("x86_64", "cc", ()), ("x86_64", "0f05", ("singlestep",)), ("i386", "8ed0", ()),
    ("x86_64", "f2ff1500000000", ("singlestep",)),                   # bnd call [rip]
])
def test_refused_instructions_say_why_and_what_else(arch, code, alternatives):
    with pytest.raises(RelocationRefused) as info:
        reloc(code, arch)
    assert info.value.alternatives == alternatives and info.value.reason


def test_arch_mismatch_is_an_error():
    with pytest.raises(InstrumenterError):
        relocate(decode(b"\x90", ORIG, "i386"), NEAR, "x86_64")
