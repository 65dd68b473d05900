"""emu.machine: how events reach the kernel's callbacks and how run() ends.

Saved-IP conventions are the architectural ones (Intel SDM Vol. 3A, 6.5): traps (int3, int n,
syscall) report the next instruction, faults (#DE, #UD) the faulting one.
"""
import pytest

from emu import exits
from emu.machine import Machine

from .guest import CODE, DATA, RW, STACK_SP, asm, ax, machine_with


def _recorder(result=False):
    seen = []

    def handler(*args):
        seen.append(args)
        return result
    return seen, handler


def _offset_after(arch, prefix):
    return CODE + len(asm(prefix, arch))


# ---- traps through trap_handler ------------------------------------------------------------

def test_int3_reaches_trap_handler_with_pc_after_it(arch):
    m = machine_with(arch, "nop; int3; nop")
    seen, m.trap_handler = _recorder()
    exit_ = m.run(CODE)
    assert seen == [(3, CODE + 2)]
    assert exit_ == exits.Exit(exits.TRAP, CODE + 2, vector=3)


def test_int_0x80_reaches_trap_handler_with_pc_after_it(arch):
    m = machine_with(arch, "nop; int 0x80; nop")
    seen, m.trap_handler = _recorder()
    exit_ = m.run(CODE)
    assert seen == [(0x80, CODE + 3)]
    assert (exit_.kind, exit_.vector, exit_.pc) == (exits.TRAP, 0x80, CODE + 3)


def test_handled_trap_continues_in_the_same_run(arch):
    m = machine_with(arch, "int3; mov eax, 5; int 0x80")
    m.trap_handler = lambda vector, pc: vector == 3
    exit_ = m.run(CODE)
    assert exit_.vector == 0x80 and m.reg(ax(arch)) == 5


def test_divide_error_reports_the_div_instruction(arch):
    m = machine_with(arch, "xor ecx, ecx; mov eax, 1; div ecx; nop")
    seen, m.trap_handler = _recorder()
    exit_ = m.run(CODE)
    div_at = _offset_after(arch, "xor ecx, ecx; mov eax, 1")
    assert seen == [(0, div_at)]
    assert exit_ == exits.Exit(exits.TRAP, div_at, vector=0)


def test_repeated_divide_errors_stay_divide_errors(arch):
    """Unicorn would turn the second handled #DE into #DF and stop silently on the third
    (docs/unicorn.md item 6); the erratum fix in emu/ keeps every one a #DE."""
    m = machine_with(arch, "xor ecx, ecx; mov eax, 1; div ecx; nop")
    div_at = _offset_after(arch, "xor ecx, ecx; mov eax, 1")
    seen = []

    def retry(vector, pc):
        seen.append((vector, pc))
        if len(seen) < 5:
            m.pc = CODE               # run the faulting sequence again
            return True
        return False
    m.trap_handler = retry
    exit_ = m.run(CODE)
    assert seen == [(0, div_at)] * 5
    assert exit_.kind == exits.TRAP and exit_.vector == 0


def test_repeated_divide_errors_across_runs_stay_divide_errors(arch):
    m = machine_with(arch, "xor ecx, ecx; mov eax, 1; div ecx; nop")
    seen, m.trap_handler = _recorder()
    vectors = [m.run(CODE).vector for _ in range(5)]
    assert vectors == [0] * 5 and [v for v, _ in seen] == [0] * 5


def test_ud2_reaches_trap_handler_as_vector_6_at_the_instruction(arch):
    m = machine_with(arch, "nop; nop; ud2; nop")
    seen, m.trap_handler = _recorder()
    exit_ = m.run(CODE)
    assert seen == [(6, CODE + 2)]
    assert exit_ == exits.Exit(exits.TRAP, CODE + 2, vector=6)


def test_ud_handler_that_moves_pc_resumes_there(arch):
    """US 7,350,196's LOCK/#UD probe: the handler emulates and skips the bad instruction."""
    m = machine_with(arch, "ud2; mov eax, 9; int3")

    def skip(vector, pc):
        if vector == 6:
            m.pc = pc + 2
            return True
        return False
    m.trap_handler = skip
    exit_ = m.run(CODE)
    assert exit_.vector == 3 and m.reg(ax(arch)) == 9


# ---- x86-64 syscall --------------------------------------------------------------------------

SYSCALL_PROGRAM = "mov eax, 60; syscall; mov ebx, 1; int3; mov ebx, 2; int3"


def test_syscall_handler_sees_pc_after_the_instruction():
    m = machine_with("x86_64", SYSCALL_PROGRAM)
    after = _offset_after("x86_64", "mov eax, 60; syscall")
    seen = []

    def handler(pc):
        seen.append((pc, m.pc, m.reg("rax")))
        return True
    m.syscall_handler = handler
    exit_ = m.run(CODE)
    assert seen == [(after, after, 60)]
    assert exit_.vector == 3 and m.reg("rbx") == 1


def test_pc_written_inside_syscall_handler_is_honoured_exactly():
    m = machine_with("x86_64", SYSCALL_PROGRAM)
    second = _offset_after("x86_64", "mov eax, 60; syscall; mov ebx, 1; int3")

    def handler(pc):
        m.pc = second
        assert m.pc == second          # reads back what was written, not Unicorn's view
        return True
    m.syscall_handler = handler
    exit_ = m.run(CODE)
    assert m.reg("rbx") == 2 and exit_.pc == second + len(asm("mov ebx, 2; int3", "x86_64"))


def test_declined_syscall_ends_run_with_pc_after_the_instruction():
    m = machine_with("x86_64", SYSCALL_PROGRAM)
    after = _offset_after("x86_64", "mov eax, 60; syscall")
    m.syscall_handler = lambda pc: False
    exit_ = m.run(CODE)
    assert exit_ == exits.Exit(exits.SYSCALL, after)
    assert m.pc == after               # the run loop resumes from here
    assert m.run(m.pc).vector == 3 and m.reg("rbx") == 1


def test_syscall_without_a_handler_ends_run():
    m = machine_with("x86_64", SYSCALL_PROGRAM)
    assert m.run(CODE).kind == exits.SYSCALL


# ---- memory faults ---------------------------------------------------------------------------

UNMAPPED = 0x50000


@pytest.mark.parametrize("source,access", [
    (f"mov eax, dword ptr [{UNMAPPED:#x}]", exits.READ),
    (f"mov dword ptr [{UNMAPPED:#x}], eax", exits.WRITE),
])
def test_unmapped_data_access_is_a_fault_exit(arch, source, access):
    m = machine_with(arch, "nop; " + source)
    exit_ = m.run(CODE)
    assert exit_ == exits.Exit(exits.FAULT, CODE + 1, address=UNMAPPED, access=access, unmapped=True)


def test_fetch_from_unmapped_memory_is_a_fault_exit(arch):
    m = machine_with(arch, f"mov eax, {UNMAPPED:#x}; jmp eax" if arch == "i386"
                     else f"mov rax, {UNMAPPED:#x}; jmp rax")
    exit_ = m.run(CODE)
    assert (exit_.kind, exit_.address, exit_.access, exit_.unmapped) == \
        (exits.FAULT, UNMAPPED, exits.FETCH, True)
    assert exit_.pc == UNMAPPED


def test_write_to_read_only_page_is_a_protection_fault(arch):
    m = machine_with(arch, f"nop; mov dword ptr [{DATA:#x}], 1")
    m.mem.protect(DATA, 0x1000, 1)
    exit_ = m.run(CODE)
    assert exit_ == exits.Exit(exits.FAULT, CODE + 1, address=DATA, access=exits.WRITE, unmapped=False)


def test_read_of_no_access_page_is_a_protection_fault(arch):
    m = machine_with(arch, f"nop; mov eax, dword ptr [{DATA + 8:#x}]")
    m.mem.protect(DATA, 0x1000, 0)
    exit_ = m.run(CODE)
    assert exit_ == exits.Exit(exits.FAULT, CODE + 1, address=DATA + 8, access=exits.READ, unmapped=False)


def test_fetch_from_non_executable_page_is_a_protection_fault(arch):
    m = machine_with(arch, "")
    m.mem.write(DATA, b"\x90\x90")
    exit_ = m.run(DATA)
    assert (exit_.kind, exit_.address, exit_.access) == (exits.FAULT, DATA, exits.FETCH)
    assert exit_.unmapped is False


# ---- budgets, stop, errors in handlers -----------------------------------------------------

def test_count_budget_ends_with_kind_budget(arch):
    m = machine_with(arch, "nop; nop; nop; nop; nop; int3")
    exit_ = m.run(CODE, count=3)
    assert exit_ == exits.Exit(exits.BUDGET, CODE + 3)


def test_a_count_after_a_run_without_one_counts_every_instruction(arch):
    """Blocks translated by a run without a count have no call to Unicorn's counting hook,
    which a counted run adds without a flush: they would run past the budget, uncounted (the
    scheduler's quantum for a thread after it ran alone)."""
    loop = "mov ecx, 100; l: dec ecx; jnz l; int3"
    fresh = machine_with(arch, loop)
    expected = fresh.run(CODE, count=10)
    m = machine_with(arch, loop)
    assert m.run(CODE).kind == exits.TRAP                 # translates the loop, uncounted
    assert m.run(CODE, count=10) == expected and expected.kind == exits.BUDGET
    assert m.last_run_insns == fresh.last_run_insns == 10


def test_stop_from_a_handler_ends_with_kind_stopped(arch):
    m = machine_with(arch, "int3; nop; nop; int3")

    def stop_once(vector, pc):
        m.stop()
        return True
    m.trap_handler = stop_once
    exit_ = m.run(CODE)
    assert exit_.kind == exits.STOPPED and exit_.pc == CODE + 1


class _HandlerBug(Exception):
    pass


def test_exception_in_trap_handler_propagates_with_its_traceback(arch):
    m = machine_with(arch, "int3")

    def broken_trap_handler(vector, pc):
        raise _HandlerBug(f"vector {vector}")
    m.trap_handler = broken_trap_handler
    with pytest.raises(_HandlerBug, match="vector 3") as info:
        m.run(CODE)
    assert any(entry.name == "broken_trap_handler" for entry in info.traceback)


def test_exception_in_syscall_handler_propagates_and_machine_stays_usable():
    m = machine_with("x86_64", SYSCALL_PROGRAM)

    def broken_syscall_handler(pc):
        raise _HandlerBug("boom")
    m.syscall_handler = broken_syscall_handler
    with pytest.raises(_HandlerBug) as info:
        m.run(CODE)
    assert any(entry.name == "broken_syscall_handler" for entry in info.traceback)
    m.syscall_handler = lambda pc: True
    assert m.run(CODE).vector == 3 and m.reg("rbx") == 1


# ---- registers and contexts ------------------------------------------------------------------

def test_register_file_round_trip(arch):
    m = machine_with(arch)
    names = ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp") if arch == "i386" else \
        ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
    for i, name in enumerate(names):
        m.set_reg(name, 0x1111 * (i + 1))
    m.pc = CODE + 5
    saved = m.registers()
    assert saved.arch == arch and saved["pc"] == CODE + 5 and saved[names[0]] == 0x1111
    assert saved.as_dict()["cs"] == m.reg("cs")

    other = machine_with(arch)
    other.set_registers(saved)
    again = other.registers()
    assert again.gpr == saved.gpr and again.pc == saved.pc and again.flags == saved.flags


def test_saved_context_restores_registers(arch):
    m = machine_with(arch, "mov eax, 1; mov ebx, 2; int3")
    ctx = m.save_context()
    m.run(CODE)
    assert (m.reg(ax(arch)), m.sp) == (1, STACK_SP)
    m.restore_context(ctx)
    assert m.reg(ax(arch)) == 0 and m.pc != CODE + len(asm("mov eax, 1; mov ebx, 2; int3", arch))


def test_context_restored_inside_syscall_hook_resumes_at_its_pc():
    """Thread switch at a syscall: the restored PC is architectural (no +2 from Unicorn)."""
    m = machine_with("x86_64", "mov ebx, 7; int3; syscall; mov ebx, 1; int3")
    m.trap_handler = lambda vector, pc: False
    m.run(CODE)                                  # stops at the first int3: pc = syscall insn
    other = m.save_context()                     # "another thread" parked at the syscall insn
    switched = []

    def switch(pc):
        if not switched:
            switched.append(pc)
            m.restore_context(other)
            return True
        return False
    m.syscall_handler = switch
    exit_ = m.run(m.pc)
    # the restored thread re-executes the syscall (second call declined), then nothing else
    assert switched and exit_.kind == exits.SYSCALL and exit_.pc == switched[0]


def test_set_reg_rejects_unknown_register(arch):
    from emu.errors import MachineError
    m = Machine(arch)
    with pytest.raises(MachineError):
        m.set_reg("xyz", 1)


# ---- protection changes after the code and data were used ----------------------------------

def test_guard_page_made_prot_none_after_use_faults_on_read(arch):
    """mprotect(PROT_NONE) of a page the guest already read (a thread-stack guard page)."""
    m = machine_with(arch, f"mov eax, dword ptr [{DATA + 8:#x}]; int3")
    m.mem.write(DATA + 8, b"\x11\x22\x33\x44")
    assert m.run(CODE).vector == 3 and m.reg(ax(arch)) == 0x44332211
    m.mem.protect(DATA, 0x1000, 0)
    exit_ = m.run(CODE)
    assert exit_ == exits.Exit(exits.FAULT, CODE, address=DATA + 8, access=exits.READ, unmapped=False)


def test_code_made_non_executable_after_it_ran_faults_on_fetch(arch):
    """Without dropping the translation, the already translated block would keep running."""
    m = machine_with(arch, "mov eax, 1; int3")
    assert m.run(CODE).vector == 3
    m.mem.protect(CODE, 0x1000, RW)
    exit_ = m.run(CODE)
    assert (exit_.kind, exit_.address, exit_.access, exit_.unmapped) == \
        (exits.FAULT, CODE, exits.FETCH, False)


def test_exception_in_ud_handler_propagates_with_its_traceback(arch):
    """The #UD hook makes Unicorn fail when it raises; the handler's error must still win."""
    m = machine_with(arch, "nop; ud2")

    def broken_ud_handler(vector, pc):
        raise _HandlerBug(f"vector {vector} at {pc:#x}")
    m.trap_handler = broken_ud_handler
    with pytest.raises(_HandlerBug, match=f"vector 6 at {CODE + 1:#x}") as info:
        m.run(CODE)
    assert any(entry.name == "broken_ud_handler" for entry in info.traceback)


def test_software_interrupt_flag_tells_int_n_from_cpu_exceptions(arch):
    """`int 0` and a real #DE both arrive as vector 0; the kernel must tell them apart."""
    m = machine_with(arch, "int 0; xor ecx, ecx; div ecx; ud2; int3")
    flags = []

    def record(vector, pc):
        flags.append((vector, m.software_interrupt))
        if vector in (0, 6) and len(flags) < 4:
            # int 0 saved the next IP already; the faults (div ecx, ud2: 2 bytes) get skipped
            m.pc = pc if m.software_interrupt else pc + 2
            return True
        return False
    m.trap_handler = record
    m.run(CODE)
    assert flags == [(0, True), (0, False), (6, False), (3, True)]


def test_fault_after_a_handled_int_n_is_not_reported_as_software(arch):
    m = machine_with(arch, f"int 0x80; mov eax, dword ptr [{0x50000:#x}]")
    m.trap_handler = lambda vector, pc: True
    exit_ = m.run(CODE)
    assert exit_.kind == exits.FAULT and m.software_interrupt is False
