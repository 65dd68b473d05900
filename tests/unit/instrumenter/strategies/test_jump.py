"""Jump-site qualification (instrumenter/strategies/jump.py): which sites a 5-byte jmp may patch, and why
the others are refused; the covered instructions relocated back to back; the live-thread check.
"""
from types import SimpleNamespace

import pytest

from emu.registers import REGISTER_IDS
from instrumenter.insn.decode import decode
from instrumenter.errors import InstrumenterError
from instrumenter.strategies.jump import JumpProbes, qualify, relocate_covered
from kernel_model.debug import DebugInterface
from tests.unit.emu.guest import ARCHES, asm

FUNC = 0x40_1000
XOL = 0x40_8000
FP = {"i386": ("ebp", "esp"), "x86_64": ("rbp", "rsp")}


def _function(arch: str, source: str) -> bytes:
    return asm(source, arch, FUNC)


def _prologue(arch: str) -> str:
    bp, sp = FP[arch]
    return f"push {bp}; mov {bp}, {sp}; push {'edi' if arch == 'i386' else 'r14'}; push {bp}"


@pytest.mark.parametrize("arch", ARCHES)
def test_a_frame_pointer_prologue_is_covered_and_accepted(arch):
    bp, _ = FP[arch]
    code = _function(arch, _prologue(arch) + f"; xor eax, eax; pop {bp}; pop {bp}; ret")
    covered = qualify(code, FUNC, "f", FUNC, arch)
    # i386: push ebp (1) + mov ebp,esp (2) + push edi (1) + push ebp (1) = 5 bytes;
    # x86-64: push rbp (1) + mov rbp,rsp (3) + push r14 (2) = 6 bytes.
    assert [i.mnemonic for i in covered] == (["push", "mov", "push", "push"] if arch == "i386"
                                             else ["push", "mov", "push"])
    assert covered[-1].next_address - FUNC == (5 if arch == "i386" else 6)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_branch_into_the_patched_bytes_is_refused(arch):
    bp, sp = FP[arch]
    # The loop jumps back to the `mov` at FUNC+1, which the jump's displacement would overwrite.
    code = _function(arch, f"push {bp}; again: mov {bp}, {sp}; nop; nop; nop; dec eax; "
                           f"jnz again; pop {bp}; ret")
    with pytest.raises(InstrumenterError, match="branches into the patched bytes"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_branch_to_the_site_itself_is_fine(arch):
    code = _function(arch, "again: nop; nop; nop; nop; nop; dec eax; jnz again; ret")
    assert len(qualify(code, FUNC, "f", FUNC, arch)) == 5


@pytest.mark.parametrize("arch", ARCHES)
def test_a_function_shorter_than_the_jump_is_refused(arch):
    bp, _ = FP[arch]
    code = _function(arch, f"push {bp}; pop {bp}; ret")
    with pytest.raises(InstrumenterError, match="f ends 3 bytes after it; a 5-byte jump does not fit"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_end_of_a_function_is_refused_even_if_the_function_is_long(arch):
    code = _function(arch, "nop; " * 8 + "xor eax, eax; ret")
    with pytest.raises(InstrumenterError, match="ends 3 bytes after it"):
        qualify(code, FUNC, "f", FUNC + 8, arch)


def test_a_rip_relative_read_of_the_patched_bytes_is_refused():
    # lea rax, [rip - 7] at FUNC+1 (7 bytes) addresses FUNC+1: code reading itself.
    code = _function("x86_64", "push rbp; lea rax, [rip - 7]; pop rbp; ret")
    assert decode(code[1:], FUNC + 1, "x86_64").rip_target == FUNC + 1
    with pytest.raises(InstrumenterError, match=r"reads the patched bytes through \[rip\]"):
        qualify(code, FUNC, "f", FUNC, "x86_64")


def test_a_rip_relative_read_elsewhere_in_the_function_is_refused_too():
    code = _function("x86_64", "push rbp; mov rbp, rsp; push rbx; nop; "
                               "mov eax, dword ptr [rip - 10]; pop rbx; pop rbp; ret")   # FUNC+2
    with pytest.raises(InstrumenterError, match="reads the patched bytes"):
        qualify(code, FUNC, "f", FUNC, "x86_64")


@pytest.mark.parametrize("arch", ARCHES)
def test_a_call_whose_return_address_is_patched_is_refused(arch):
    # The callee returns to FUNC+2, the middle of the jump.
    code = _function(arch, f"call {'eax' if arch == 'i386' else 'rax'}; nop; nop; nop; nop; ret")
    with pytest.raises(InstrumenterError, match="pushes a return address inside the patched bytes"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_an_unrelocatable_instruction_under_the_jump_is_refused(arch):
    code = _function(arch, "nop; nop; int 0x80; nop; nop; ret")
    with pytest.raises(InstrumenterError, match="under the jump cannot be relocated: INT n"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_an_instruction_that_does_not_fall_through_before_the_end_is_refused(arch):
    code = _function(arch, "nop; ret; nop; nop; nop; nop; ret")
    with pytest.raises(InstrumenterError, match="does not fall through"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_function_with_an_indirect_jump_is_refused(arch):
    reg = "eax" if arch == "i386" else "rax"
    code = _function(arch, f"nop; nop; nop; nop; nop; jmp {reg}")
    with pytest.raises(InstrumenterError, match="indirect jump"):
        qualify(code, FUNC, "f", FUNC, arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_covered_instructions_run_back_to_back_and_jump_back_once(arch):
    bp, _ = FP[arch]
    code = _function(arch, _prologue(arch) + f"; pop {bp}; pop {bp}; ret")
    covered = qualify(code, FUNC, "f", FUNC, arch)
    moved = relocate_covered(covered, XOL, arch)
    end = covered[-1].next_address
    # The original bytes of the covered instructions, then one jmp rel32 back to the end.
    assert moved[:end - FUNC] == code[:end - FUNC]
    back = decode(moved[end - FUNC:], XOL + end - FUNC, arch)
    assert back.mnemonic == "jmp" and back.branch_target == end
    assert len(moved) == end - FUNC + 5


@pytest.mark.parametrize("arch", ARCHES)
def test_a_covered_conditional_branch_falls_through_into_the_next_piece(arch):
    # jz (2 bytes) is followed by two nops under the jump: its fall-through must run the
    # relocated nops, not jump back into the patched original.
    code = _function(arch, "test eax, eax; jz out; nop; nop; nop; out: ret")
    covered = qualify(code, FUNC, "f", FUNC, arch)
    moved = relocate_covered(covered, XOL, arch)
    jcc = decode(moved[2:], XOL + 2, arch)
    assert jcc.mnemonic == "je" and jcc.branch_target == FUNC + 7
    following = decode(moved[2 + jcc.length:], XOL + 2 + jcc.length, arch)
    assert following.mnemonic == "nop"


class _Context:
    def __init__(self, pc_name: str, pc: int):
        self.values = {REGISTER_IDS[pc_name]: pc}

    def reg_read(self, reg_id):
        return self.values[reg_id]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_thread_stopped_inside_the_covered_bytes_refuses_the_jump(arch):
    pc_name = "eip" if arch == "i386" else "rip"
    machine = SimpleNamespace(arch=SimpleNamespace(pc=pc_name), reg={pc_name: FUNC}.__getitem__)
    process = SimpleNamespace(machine=machine, threads=[], space=SimpleNamespace(machine=machine))
    # the running thread's registers are live in the Machine; the preempted one's are saved
    running = SimpleNamespace(tid=1, state="runnable", context=None, process=process)
    preempted = SimpleNamespace(tid=2, state="runnable", context=_Context(pc_name, FUNC + 3),
                                process=process)
    exited = SimpleNamespace(tid=3, state="zombie", context=None, process=process)
    process.threads += [running, exited]
    probes = JumpProbes.__new__(JumpProbes)
    probes.debug = DebugInterface()
    probes._check_threads(process, FUNC, FUNC + 5)           # at the site itself: fine
    process.threads.append(preempted)
    with pytest.raises(InstrumenterError, match="tid 2 is stopped at"):
        probes._check_threads(process, FUNC, FUNC + 5)
