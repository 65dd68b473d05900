"""Emulate and singlestep strategies (US 7,350,196) and the Machine support they rely on: LOCK-prefix
#UD sites (docs/unicorn.md item 5), TF single-step traps, refusals with reasons, a faulting
emulated push, and the singlestep window (original bytes in place until #DB)."""
import pytest

from emu import exits
from emu.machine import Machine
from instrumenter.insn.decode import decode
from instrumenter.strategies.emulate.strategy import EmulateProbes, lock_patch_refusal
from instrumenter.strategies.emulate.insn import emulation_refusal
from instrumenter.errors import InstrumenterError
from instrumenter.strategies.singlestep import TF, SingleStepProbes
from kernel_model.cpu import idt as V
from kernel_model.signals import SIGSEGV
from tests.unit.emu.guest import CODE, asm, machine_with

from ..emulate_harness import emulating_space
from tests.unit.kernel_model.userland import USER_CODE, USER_SP

ARCHES = ("i386", "x86_64")
BP = {"i386": "ebp", "x86_64": "rbp"}
SP = {"i386": "esp", "x86_64": "rsp"}


@pytest.fixture(params=ARCHES)
def arch(request):
    return request.param


# ---- the Machine: LOCK-prefix sites raise #UD at the patched address ----------------------------
def _lock_machine(arch):
    """push bp; mov bp, sp with the push patched to 0xf0: `f0 89 e5` (`f0 48 89 e5`)."""
    m = machine_with(arch, f"mov ebx, 1; nop; push {BP[arch]}; mov {BP[arch]}, {SP[arch]}; "
                           "inc ebx; nop")
    site = CODE + 6
    m.mem.write(site, b"\xf0")
    m.trap_lock_prefix(site)
    return m, site


def test_unicorn_runs_a_locked_mov_silently_without_the_site_hook(arch):
    m = machine_with(arch, "nop")
    m.mem.write(CODE, bytes.fromhex("f089e5") + b"\xf4")
    exit_ = m.run(CODE, count=1)
    assert exit_.kind == exits.BUDGET and m.pc == CODE + 3      # the erratum the hook corrects


def test_lock_site_reports_ud_with_the_patched_address_and_resumes_where_the_handler_says(arch):
    m, site = _lock_machine(arch)
    seen = []

    def handler(vector, pc):
        seen.append((vector, pc))
        m.pc = pc + 1                                # past the (patched) push: "emulated"
        return True
    m.trap_handler = handler
    m.run(CODE, count=5)           # mov, nop, the site (counted once), mov, inc
    assert seen == [(6, site)]
    assert m.reg("ebx") == 2                          # inc ebx after the site ran


def test_unhandled_lock_site_stops_at_the_site_without_running_it(arch):
    m, site = _lock_machine(arch)
    m.trap_handler = lambda vector, pc: False
    exit_ = m.run(CODE)
    assert exit_.kind == exits.TRAP and exit_.vector == 6 and exit_.pc == site
    assert m.pc == site and m.reg("ebx") == 1


def test_lock_site_whose_patch_was_taken_out_runs_the_original(arch):
    m, site = _lock_machine(arch)
    original = b"\x55"                              # push ebp / push rbp

    def restore(vector, pc):
        m.mem.write(site, original)                  # the handler removes the patch
        return True
    m.trap_handler = restore
    m.set_reg(BP[arch], 0)
    m.run(CODE)                    # ends at the zero bytes after the code (add [eax], al faults)
    assert m.reg(BP[arch]) == m.sp and m.reg("ebx") == 2


def test_untrapped_lock_byte_is_left_to_unicorn(arch):
    m, site = _lock_machine(arch)
    m.untrap_lock_prefix(site)
    calls = []
    m.trap_handler = lambda vector, pc: calls.append(vector) or True
    m.run(CODE, count=5)
    assert 6 not in calls


def test_tf_raises_db_after_one_instruction_with_the_next_ip(arch):
    """Unicorn honours EFLAGS.TF: the singlestep strategy needs no emulator workaround."""
    m = machine_with(arch, "inc ebx; inc ebx; nop")
    seen = []

    def handler(vector, pc):
        seen.append((vector, pc, m.reg("ebx")))
        m.set_reg(m.arch.flags, m.reg(m.arch.flags) & ~TF)
        return True
    m.trap_handler = handler
    m.set_reg(m.arch.flags, m.reg(m.arch.flags) | TF)
    m.run(CODE, count=3)
    assert seen == [(1, CODE + (1 if arch == "i386" else 2), 1)]


# ---- refusals ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text,why", [("mov eax, ebx", "not an instruction the emulate"),
                                      ("enter 16, 1", "nesting level"),
                                      ("push fs", "segment register")])
def test_emulation_refusals_say_why(arch, text, why):
    assert why in emulation_refusal(decode(asm(text, arch), CODE, arch))


def test_lock_form_is_refused_where_the_patch_makes_a_valid_locked_instruction(arch):
    # nop; add [eax], al: f0 00 00 is `lock add [eax], al`, which does not fault.
    code = asm("nop; add byte ptr [eax], al", arch)
    assert "valid locked instruction" in lock_patch_refusal(code[1:] + b"\0" * 8, CODE, arch)
    assert lock_patch_refusal(b"\x55" + asm("mov ebp, esp", arch), CODE, arch) is None


# ---- the strategies through the IDT (harness: Space + kernel vectors) -------------------------
@pytest.mark.parametrize("form", ["int3", "lock"])
def test_emulated_push_with_a_bad_stack_reports_a_page_fault_at_the_instruction(arch, form):
    code = asm(f"push {BP[arch]}; mov {BP[arch]}, {SP[arch]}; nop", arch, USER_CODE)
    space, process, session = emulating_space(arch, code)
    EmulateProbes(session, form=form).place(process, USER_CODE, lambda t, a: None, "test")
    space.machine.set_reg(SP[arch], 0x1000)           # nothing mapped below
    space.machine.run(USER_CODE, count=1)
    assert session.kernel.exceptions == [(V.PF, SIGSEGV, USER_CODE)]
    assert space.machine.pc == USER_CODE and space.machine.sp == 0x1000


def test_emulate_refuses_a_site_already_probed_by_another_strategy(arch):
    code = asm(f"push {BP[arch]}; mov {BP[arch]}, {SP[arch]}; nop", arch, USER_CODE)
    space, process, session = emulating_space(arch, code)
    session.debug.register_breakpoint(space, USER_CODE, lambda frame, thread: True)
    with pytest.raises(InstrumenterError, match="another strategy"):
        EmulateProbes(session).place(process, USER_CODE, lambda t, a: None, "test")
    assert space.machine.mem.read(USER_CODE, 1) == code[:1]      # nothing patched


def test_singlestep_restores_the_original_until_the_debug_trap(arch):
    code = asm(f"push {BP[arch]}; mov {BP[arch]}, {SP[arch]}; nop; nop", arch, USER_CODE)
    space, process, session = emulating_space(arch, code)
    probes = SingleStepProbes(session)
    hits = []
    probes.place(process, USER_CODE, lambda t, a: hits.append(a), "test")
    m = space.machine
    assert m.mem.read(USER_CODE, 1) == b"\xcc"
    m.run(USER_CODE, count=1)                          # the int3: hook, restore, TF, IRET
    assert hits == [USER_CODE] and m.pc == USER_CODE
    assert m.mem.read(USER_CODE, 1) == code[:1]        # the window: the original is exposed
    assert m.reg(m.arch.flags) & TF
    m.run(USER_CODE, count=1)                          # push runs, then #DB re-inserts
    assert m.mem.read(USER_CODE, 1) == b"\xcc" and not m.reg(m.arch.flags) & TF
    assert m.sp == USER_SP - m.arch.word and m.pc == USER_CODE + 1
    assert probes.restores == 1 and probes.stepping == {}
