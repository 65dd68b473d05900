"""US 7,350,196's figures 4A/4B, 5A/5B and 6A/6B, word by word.

Kernel code (CPL 0, i386) traps at the same privilege level: the CPU pushes EFLAGS (402), CS
(404) and EIP (406) on the stack the function uses, and the handler shifts them so that IRET
leaves the stack as the emulated instruction would. Each test runs a small function as kernel
code with one probe, and checks the stack words the handler found (the "A" figure) and left
for IRET (the "B" figure) at the figure's positions ("ESP after trap + 8" ...).
"""
import pytest

from instrumenter.strategies.emulate.kernel_probes import KernelEmulateProbes
from kernel_model.ring0 import BareGuest
from tests.unit.emu.guest import asm

CODE = 0x0040_0000
PADDING = b"\xcc" * 16
POP_FUNCTION = "push ebp; mov ebp, esp; mov eax, [ebp+8]; pop ebp; ret"
LEAVE_FUNCTION = "push ebp; mov ebp, esp; sub esp, 8; mov eax, [ebp+8]; mov [ebp-4], eax; leave; ret"
KERNEL_CS = 0x10                 # __KERNEL_CS (kernel_model/cpu/gdt.py)


def _one_emulation(source: str, probed_offset: int, form: str, argument: int = 7):
    """Run `source` as ring-0 code with one probe at CODE + probed_offset; its Emulation."""
    guest = BareGuest("i386", ring=0)
    code = asm(source, "i386", CODE)
    guest.load_code(CODE, code + PADDING)
    probes = KernelEmulateProbes(guest, form=form, record=True)
    hits = []
    probes.place(CODE + probed_offset, lambda address, frame: hits.append(address))
    assert guest.call(CODE, argument) == argument
    assert hits == [CODE + probed_offset] and len(probes.emulations) == 1
    return guest, probes.emulations[0]


def _saved_eip(form: str, site: int) -> int:
    """EIP (406): #BP is a trap (saved IP after the int3), #UD a fault (the site itself)."""
    return site + 1 if form == "int3" else site


def _before(e, offset: int) -> int:
    return e.word_at(e.frame_before.address + offset, after=False)


def _after(e, offset: int) -> int:
    return e.word_at(e.frame_before.address + offset, after=True)


@pytest.mark.parametrize("form", ["int3", "lock"])
def test_figure_4_push_ebp_moves_the_frame_down_one_slot(form):
    guest, e = _one_emulation(POP_FUNCTION, 0, form)
    eflags = e.frame_before.flags
    # FIG. 4A: EIP at "ESP after trap", CS at +4, EFLAGS at +8; no ESP/SS (same privilege).
    assert e.frame_before.sp is None and e.frame_before.cs == KERNEL_CS
    assert e.sp_before_trap == e.frame_before.address + 12
    assert [_before(e, o) for o in (0, 4, 8)] == [_saved_eip(form, CODE), KERNEL_CS, eflags]
    # FIG. 4B ([0036]): EIP+1 (408) at "ESP after trap - 4", CS at "ESP after trap", EFLAGS at
    # "+ 4", EBP (410) at "+ 8"; then ESP is decremented by 4 ([0037]) and IRET pops from there.
    assert [_after(e, o) for o in (-4, 0, 4, 8)] == [CODE + 1, KERNEL_CS, eflags, e.bp_before_trap]
    assert e.frame_after.address == e.frame_before.address - 4
    assert e.bp_after == e.bp_before_trap                  # push does not change EBP
    # After IRET: ESP is one slot below ESP before trap, as after a native push ([0038]).
    assert e.frame_after.address + e.frame_after.size == e.sp_before_trap - 4


@pytest.mark.parametrize("form", ["int3", "lock"])
def test_figure_5_pop_ebp_moves_the_frame_up_one_slot(form):
    site = CODE + len(asm("push ebp; mov ebp, esp; mov eax, [ebp+8]", "i386", CODE))
    guest, e = _one_emulation(POP_FUNCTION, site - CODE, form)
    eflags, saved_ebp = e.frame_before.flags, _before(e, 12)
    # FIG. 5A: EIP, CS, EFLAGS, and EBP (410) at "ESP after trap + 12" = "EBP before trap".
    assert [_before(e, o) for o in (0, 4, 8)] == [_saved_eip(form, site), KERNEL_CS, eflags]
    assert e.bp_before_trap == e.frame_before.address + 12 == e.sp_before_trap
    # FIG. 5B ([0040]): EBP loaded from "ESP after trap + 12", EFLAGS stored there, CS at
    # "+ 8", EIP+1 (408) at "+ 4"; "ESP after trap" is incremented by 4 ([0041]). The word at
    # "ESP after trap" is left as it was: the old EIP (406), now below the stack pointer.
    assert e.bp_after == saved_ebp
    assert [_after(e, o) for o in (0, 4, 8, 12)] == [_saved_eip(form, site), site + 1,
                                                     KERNEL_CS, eflags]
    assert e.frame_after.address == e.frame_before.address + 4
    assert e.frame_after.address + e.frame_after.size == e.sp_before_trap + 4


@pytest.mark.parametrize("form", ["int3", "lock"])
def test_figure_6_leave_moves_the_frame_up_to_the_frame_pointer(form):
    site = CODE + len(asm("push ebp; mov ebp, esp; sub esp, 8; mov eax, [ebp+8]; "
                          "mov [ebp-4], eax", "i386", CODE))
    guest, e = _one_emulation(LEAVE_FUNCTION, site - CODE, form)
    eflags, ebp_before = e.frame_before.flags, e.bp_before_trap
    saved_ebp = e.word_at(ebp_before, after=False)
    # FIG. 6A: EFLAGS at "ESP after trap + 8", CS at "+ 4", EIP at "ESP after trap", EBP (410)
    # at "EBP before trap" (8 bytes of locals above ESP before trap).
    assert [_before(e, o) for o in (0, 4, 8)] == [_saved_eip(form, site), KERNEL_CS, eflags]
    assert ebp_before == e.sp_before_trap + 8
    # FIG. 6B ([0044]-[0045]): EFLAGS at "EBP before trap", CS at "EBP before trap - 4",
    # EIP+1 (408) at "EBP before trap - 8"; the old EIP (402 in the text) stays at "ESP before
    # trap - 12" = "ESP after trap".
    assert [e.word_at(ebp_before + o, after=True) for o in (-8, -4, 0)] == \
        [site + 1, KERNEL_CS, eflags]
    assert e.word_at(e.sp_before_trap - 12, after=True) == _saved_eip(form, site)
    assert e.bp_after == saved_ebp
    assert e.frame_after.address == ebp_before - 8
    assert e.frame_after.address + e.frame_after.size == ebp_before + 4    # ESP after leave


def test_ret_moves_the_frame_up_past_the_return_address():
    site = CODE + len(asm("push ebp; mov ebp, esp; mov eax, [ebp+8]; pop ebp", "i386", CODE))
    guest, e = _one_emulation(POP_FUNCTION, site - CODE, "int3")
    return_address = e.word_at(e.sp_before_trap, after=False)
    assert return_address == guest.return_address
    assert [_after(e, o) for o in (4, 8, 12)] == [return_address, KERNEL_CS, e.frame_before.flags]
    assert e.frame_after.ip == return_address
    assert e.frame_after.address + e.frame_after.size == e.sp_before_trap + 4


def test_x86_64_kernel_frames_carry_ss_rsp_and_move_only_when_a_push_lands_in_them():
    """64-bit mode pushes SS:RSP even without a privilege change and aligns RSP to 16 first
    (SDM Vol. 3A, 6.14.2): with RSP 16-byte aligned, the pushed RBP would land on the saved SS,
    so the handler moves the frame below it first; IRETQ takes RSP from the frame."""
    guest = BareGuest("x86_64", ring=0)
    code = asm("push rbp; push rbp; mov rbp, rsp; pop rbp; pop rax; mov rax, rdi; ret",
               "x86_64", CODE)
    guest.load_code(CODE, code + PADDING)
    probes = KernelEmulateProbes(guest, record=True)
    for offset in (0, 1):
        probes.place(CODE + offset, lambda address, frame: None)
    assert guest.call(CODE, 5) == 5
    first, second = probes.emulations
    for e in (first, second):
        assert e.frame_before.sp == e.sp_before_trap and e.frame_before.ss == 0x18
        assert e.frame_before.address == (e.sp_before_trap & ~0xF) - 40
        assert e.frame_after.sp == e.sp_before_trap - 8
        assert e.word_at(e.sp_before_trap - 8, after=True) == e.bp_before_trap
    assert first.sp_before_trap % 16 == 8 and first.frame_after.address == first.frame_before.address
    assert second.sp_before_trap % 16 == 0
    assert second.frame_after.address + second.frame_after.size <= second.sp_before_trap - 8
