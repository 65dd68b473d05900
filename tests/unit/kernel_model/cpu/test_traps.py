"""kernel_model.memory.space + traps: ring 3 by IRET, hardware trap frames on the kernel stack, IRET
semantics from a (possibly rewritten) frame, #GP for `int n` through a DPL-0 gate, and
same-privilege traps that push onto the live stack (Intel SDM Vol. 3A, 6.12.1, 6.13, 6.14.2)."""
import struct

import pytest

from emu import exits
from kernel_model.cpu import idt as V
from kernel_model.memory.space import USER_EFLAGS

from ..userland import USER_CODE, USER_SP, user_program


def _stop(frame):
    return False            # the run ends after IRET: the test inspects the machine


def test_enter_user_mode_lands_at_cpl3_with_given_pc_and_sp(arch):
    prog = user_program(arch, "nop; int3")
    m, sel = prog.machine, prog.space.selectors
    assert m.pc == USER_CODE and m.sp == USER_SP
    assert m.reg("cs") == sel.user_cs and m.reg("cs") & 3 == 3
    assert m.reg("ss") == sel.user_ds and m.reg("ss") & 3 == 3
    assert m.reg("eflags" if arch == "i386" else "rflags") & 0x202 == 0x202


def test_user_code_runs_in_ring3_after_entry(arch):
    prog = user_program(arch, "mov eax, 7; int3")
    seen = []
    prog.space.idt.set_gate(V.BP, lambda frame: seen.append(frame) or False, dpl=3)
    exit_ = prog.machine.run(prog.machine.pc)
    assert exit_.kind == exits.TRAP and prog.machine.reg("eax") == 7
    assert seen and seen[0].from_user


def test_user_int3_builds_the_hardware_frame_on_the_kernel_stack(arch):
    prog = user_program(arch, "push 5; int3; nop")
    space, m = prog.space, prog.machine
    captured = {}

    def on_breakpoint(frame):
        captured["frame"] = frame
        captured["stack"] = m.mem.read(frame.address, frame.size)
        captured["sp_during"] = m.sp
        return False
    space.idt.set_gate(V.BP, on_breakpoint, dpl=3)
    m.run(m.pc)
    frame, word = captured["frame"], m.arch.word
    after_int3 = USER_CODE + (3 if arch == "i386" else 3)          # push imm8 (2) + int3 (1)
    assert [name for name, _ in frame.slots()] == ["ip", "cs", "flags", "sp", "ss"]
    assert frame.ip == after_int3 and frame.vector == V.BP and frame.error_code is None
    assert frame.cs == space.selectors.user_cs and frame.ss == space.selectors.user_ds
    assert frame.sp == USER_SP - word and frame.flags & USER_EFLAGS == USER_EFLAGS
    assert captured["stack"] == frame.pack()
    assert struct.unpack(f"<5{'I' if word == 4 else 'Q'}", captured["stack"]) == \
        (frame.ip, frame.cs, frame.flags, frame.sp, frame.ss)
    kstack_top = space.kstack_top(0)
    assert frame.address == kstack_top - 5 * word     # the top of the thread's kernel stack
    assert captured["sp_during"] == USER_SP - word     # user stack untouched by the trap
    assert m.pc == after_int3 and m.sp == USER_SP - word


def test_handler_rewriting_the_saved_ip_redirects_execution(arch):
    """US 9,336,001 in miniature: int3 at the probed site; the breakpoint handler points the saved
    IP at a trampoline, which does its work and jumps back past the probe."""
    source = ("mov ebx, 1; int3; back: mov ecx, 3; int 0x80; "
              "tramp: mov edx, 42; jmp back")
    prog = user_program(arch, source, labels=("back", "tramp"))
    space, m = prog.space, prog.machine
    redirected = []

    def breakpoint_handler(frame):
        redirected.append(frame.ip)
        frame.ip = prog.labels["tramp"]
        return True
    space.idt.set_gate(V.BP, breakpoint_handler, dpl=3)
    space.idt.set_gate(V.SYSCALL_VECTOR, _stop, dpl=3)
    exit_ = m.run(m.pc)
    assert redirected == [prog.labels["back"]]
    assert (m.reg("ebx"), m.reg("ecx"), m.reg("edx")) == (1, 3, 42)
    assert exit_.vector == V.SYSCALL_VECTOR


def test_int_through_a_dpl0_gate_from_ring3_is_gp_with_the_idt_error_code(arch):
    prog = user_program(arch, "nop; int 0x10; nop")
    space, m = prog.space, prog.machine
    captured = {}

    def general_protection(frame):
        captured["frame"] = frame
        captured["stack"] = m.mem.read(frame.address, frame.size)
        return False

    def must_not_run(frame):
        raise AssertionError("a DPL-0 gate must not be entered from ring 3")
    space.idt.set_gate(0x10, must_not_run, dpl=0)
    space.idt.set_gate(V.GP, general_protection, dpl=0)
    m.run(m.pc)
    frame = captured["frame"]
    assert frame.vector == V.GP
    assert frame.error_code == (0x10 << 3) | 2           # IDT index, IDT bit set (SDM 6.13)
    assert frame.ip == USER_CODE + 1                      # the int instruction itself: a fault
    assert [n for n, _ in frame.slots()] == ["error_code", "ip", "cs", "flags", "sp", "ss"]
    word = m.arch.word
    assert captured["stack"][:word] == struct.pack("<I" if word == 4 else "<Q", (0x10 << 3) | 2)
    assert captured["stack"] == frame.pack()


def test_ud_from_user_mode_saves_the_faulting_ip(arch):
    prog = user_program(arch, "nop; ud2")
    captured = []
    prog.space.idt.set_gate(V.UD, lambda frame: captured.append(frame) or False)
    prog.machine.run(prog.machine.pc)
    assert captured[0].ip == USER_CODE + 1 and captured[0].error_code is None


def _ring0_program(arch, source):
    """Ring-0 guest code: no enter_user_mode; kernel selectors loaded as after boot."""
    prog = user_program(arch, source, enter=False)
    m, sel = prog.machine, prog.space.selectors
    m.set_reg("cs", sel.kernel_cs)
    m.set_reg("ss", sel.kernel_ds)
    m.sp = USER_SP
    return prog


def test_same_privilege_trap_in_32bit_mode_pushes_only_eip_cs_eflags():
    """US 7,350,196, FIG. 4A-6B: a trap in ring-0 code puts EIP/CS/EFLAGS on the live stack."""
    prog = _ring0_program("i386", "push 0x1234; int3; pop ebx; int 0x80")
    space, m = prog.space, prog.machine
    captured = {}

    def on_breakpoint(frame):
        captured["frame"] = frame
        captured["esp"] = m.sp
        captured["stack"] = m.mem.read(m.sp, 16)
        return True
    space.idt.set_gate(V.BP, on_breakpoint, dpl=3)
    space.idt.set_gate(V.SYSCALL_VECTOR, _stop, dpl=3)
    assert m.reg("cs") & 3 == 0
    m.run(USER_CODE)
    frame = captured["frame"]
    assert [n for n, _ in frame.slots()] == ["ip", "cs", "flags"]
    assert frame.sp is None and frame.ss is None and frame.cs == space.selectors.kernel_cs
    pushed_at = USER_SP - 4                               # where `push 0x1234` left esp
    assert frame.address == captured["esp"] == pushed_at - 12
    eip, cs, eflags, pushed = struct.unpack("<4I", captured["stack"])
    assert (eip, cs, eflags) == (frame.ip, frame.cs, frame.flags) and pushed == 0x1234
    assert eip == USER_CODE + 6                           # after push imm32 (5) + int3
    # IRET popped the three words: `pop ebx` found the pushed value, esp is back where it was
    assert m.reg("ebx") == 0x1234 and m.sp == USER_SP


def test_same_privilege_trap_in_64bit_mode_still_pushes_ss_rsp():
    """64-bit mode always pushes SS:RSP and aligns RSP to 16 (SDM 6.14.2)."""
    prog = _ring0_program("x86_64", "push 0x1234; int3; pop rbx; int 0x80")
    space, m = prog.space, prog.machine
    captured = {}

    def on_breakpoint(frame):
        captured["frame"] = frame
        captured["stack"] = m.mem.read(m.sp, frame.size)
        return True
    space.idt.set_gate(V.BP, on_breakpoint, dpl=3)
    space.idt.set_gate(V.SYSCALL_VECTOR, _stop, dpl=3)
    m.run(USER_CODE)
    frame = captured["frame"]
    assert [n for n, _ in frame.slots()] == ["ip", "cs", "flags", "sp", "ss"]
    assert frame.sp == USER_SP - 8 and frame.address == ((USER_SP - 8) & ~0xF) - 40
    assert captured["stack"] == frame.pack()
    assert m.reg("rbx") == 0x1234 and m.sp == USER_SP


def test_missing_handler_is_a_kernel_panic(arch):
    from kernel_model.errors import KernelPanic
    prog = user_program(arch, "nop; ud2")
    with pytest.raises(KernelPanic, match="no IDT handler for vector 0x6"):
        prog.machine.run(prog.machine.pc)


def _gp_and_de_recorder(space):
    seen = []
    space.idt.set_gate(V.GP, lambda frame: seen.append(("GP", frame.ip, frame.error_code)) or False)
    space.idt.set_gate(V.DE, lambda frame: seen.append(("DE", frame.ip, frame.error_code)) or False)
    return seen


def test_int_0_from_ring3_is_gp_not_a_divide_error(arch):
    """`int $0` and a real #DE share vector 0; only the instruction is checked against the
    DPL-0 gate, so Linux answers it with SIGSEGV, not SIGFPE."""
    prog = user_program(arch, "nop; int 0")
    seen = _gp_and_de_recorder(prog.space)
    prog.machine.run(prog.machine.pc)
    assert seen == [("GP", USER_CODE + 1, (0 << 3) | 2)]


def test_real_divide_error_from_ring3_reaches_the_dpl0_gate(arch):
    prog = user_program(arch, "xor ecx, ecx; div ecx")
    seen = _gp_and_de_recorder(prog.space)
    prog.machine.run(prog.machine.pc)
    assert seen == [("DE", USER_CODE + 2, None)]


def test_int3_through_a_dpl0_gate_is_gp_at_the_one_byte_int3(arch):
    prog = user_program(arch, "nop; nop; int3")
    prog.space.idt.set_gate(V.BP, lambda frame: False, dpl=0)
    seen = _gp_and_de_recorder(prog.space)
    prog.machine.run(prog.machine.pc)
    assert seen == [("GP", USER_CODE + 2, (3 << 3) | 2)]
