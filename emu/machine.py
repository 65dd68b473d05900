"""The machine: one Unicorn instance = one address space, plus the CPU that runs in it.

Threads and vfork children share a Machine and are switched by saving/restoring register
contexts; a forked child gets a new Machine with a copy of the memory (docs/unicorn.md item 2).

The Machine reports events through callbacks that the kernel installs:
  trap_handler(vector, pc) -> bool     interrupts and exceptions (int3, int 0x80, #DE, #GP, #UD...)
  syscall_handler(pc) -> bool          the x86-64 `syscall` instruction
  breakpoint_redirect(pc) -> int|None  asked first about every int3: an IP means the trap is
                                       taken care of and the guest resumes there (the int3
                                       probe fast path, kernel_model/cpu/traps.py)
  set_fast_interrupt(vector, fn)       fn(vector) -> bool|None is asked first about every
                                       `int vector` (the frameless system call,
                                       kernel_model/cpu/traps.py): None sends it to trap_handler
`pc` is the architectural saved IP: after the instruction for traps (int3, int n, syscall),
at the instruction for faults (Intel SDM Vol. 3A, 6.5). A handler returns True to let the
guest continue inside the same run, False to end `run()` with an Exit describing the event.
"""
import ctypes

from unicorn import (UC_ARCH_X86, UC_ERR_FETCH_PROT, UC_ERR_FETCH_UNMAPPED, UC_HOOK_INSN,
                     UC_HOOK_INSN_INVALID, Uc, UcError)
from unicorn import x86_const as X

from . import exits, host_stop
from .clock_parts import hit_clock_view, new_clock_parts, publish
from .arch import Arch, arch_named
from .cpuid import install as install_cpuid
from .cpu_state import CpuStateViews, cpu_state_views
from .errata import InterruptErrata
from .errors import MachineError
from .host_hugepages import decline_huge_pages
from .icount import UNLIMITED, counter_of
from .insn_tracker import InstructionTracker
from .internals import binding
from .internals.binding import HOOK_INSN_SYSCALL_CFUNC, handle
from .lock_sites import LockSites
from .memory import Memory
from .raw_hooks import add_raw_hook, hook_failed
from .machine_interrupts import MachineInterrupts
from .machine_registers import SYSCALL_INSN_LEN, MachineRegisters
from .registers import RawRegister
from .tlb import page_walker

PAGE = 0x1000

# An address the guest can never execute: emu_start's `until` must not be reachable, and it
# must not sit inside hot code (docs/unicorn.md: the TB covering until-1 is re-translated).
# Runs without a count that keep Unicorn's counting hook after a run with one (run()).
STICKY_RUNS = 64
_NEVER_EXECUTED = {32: 0xFFFF_F000, 64: 0xFFFF_8000_0000_0000 - PAGE}


class Machine(MachineRegisters, MachineInterrupts):
    def __init__(self, arch: str | Arch):
        self.arch = arch if isinstance(arch, Arch) else arch_named(arch)
        decline_huge_pages()                # 2 MiB of host memory per Machine otherwise
        self.uc = Uc(UC_ARCH_X86, self.arch.uc_mode)
        self.mem = Memory(self.uc)
        self.trap_handler = None
        self.syscall_handler = None
        self.breakpoint_redirect = None
        # on_kernel_entry(): called before any handler above while a run is inside Unicorn (the
        # profiling timer hands the ticks its C handler took to their tool first: they happened
        # before whatever the kernel is about to do).
        self._on_kernel_entry = None
        self._int3_sites = None           # the C interrupt hook's sites (int3_sites.py)
        # the clock's parts where that hook reads them, published while it exists (clock_parts.py)
        self.clock_parts = new_clock_parts()
        self.hit_clock = hit_clock_view(self.clock_parts)   # its hit_ts, as an integer
        self._fast_vector, self._fast_interrupt = -1, None    # set_fast_interrupt
        self._exit: exits.Exit | None = None
        self._fault: tuple | None = None
        self._in_syscall_hook = False
        # Whether the last event reported to a handler (or ending run()) came from an
        # INT n/INT3/INTO instruction rather than a CPU exception or a memory fault: the
        # kernel checks gate DPLs only for those (Intel SDM Vol. 3A, 6.12.1.1).
        self.software_interrupt = False
        self.raw_pc = RawRegister(handle(self.uc), self.arch.pc)
        self.lock_sites = LockSites(self)         # LOCK-prefix #UD sites (lock_sites.py)
        self.icount = None                # InstructionClock once a tool asked for counts (icount.py)
        self._tracker = None              # a code hook, where a private field has no view
        # Unicorn's counter of the current/last run (icount.py); `_counting`: translations
        # carry the counting hook since a tool asked for counts
        self._insns = counter_of(self.uc, self._instruction_tracker)
        self._counting = False
        # The block clock's exact count (lazy_count.py), used for runs without a budget once
        # counting; `_live`: the counter of the run under way (this or `_insns`).
        self._blocks = None
        self._live = self._insns
        # Code hooks that stop inside a block (code breakpoints, watchpoints, LOCK-prefix
        # sites) register here: the block clock cannot see them, Unicorn's count can.
        self.exact_count_users: set = set()
        self._running = False
        self._count_hook = False          # Unicorn's counting hook is installed (run())
        self._sticky_runs = 0             # runs without a count that keep it (run())
        self.last_run_insns = 0           # instructions the last run() with a budget executed
        # EIP/RIP, CS and the general registers of the live CPU state (cpu_state.py): plain
        # loads where the layout is confirmed. A store to `eip` only counts right after an
        # interrupt hook; every other register write goes through uc_reg_write.
        self.cpu_state = cpu_state_views(self.uc)
        self._direct = isinstance(self.cpu_state, CpuStateViews)
        self._errata = InterruptErrata(self.uc, self.arch.bits, self._instruction_tracker)
        # In 32-bit mode env->eip may hold bits above 31: QEMU's jcc does not wrap its target
        # (translate.c do_jcc masks only 16-bit targets), the fetch wraps it, and
        # uc_reg_read(EIP) drops the bits; so does every read of the view here. A PC written
        # in full clears them.
        self._pc_mask = (1 << self.arch.bits) - 1
        self._readers: dict[tuple[str, ...], object] = {}        # raw_registers()
        self._pristine = self.uc.context_save()          # reset()
        self._interrupt_hook = self._add_raw_interrupt_hook()
        self._raw_hooks = [self._interrupt_hook]
        self.uc.hook_add(UC_HOOK_INSN_INVALID, self._on_invalid_instruction)
        cpuid_hook = install_cpuid(self.uc, self.cpu_state)     # the modeled CPU (cpuid.py)
        if cpuid_hook is not None:
            self._raw_hooks.append(cpuid_hook)
        # Memory faults come from the page walker, not from UC_HOOK_MEM_* hooks: such a hook
        # would send every guest store down Unicorn's slow path (tlb.py).
        self._walker = page_walker(self.uc, self.mem.perms_at, self._on_page_fault,
                                   bits=self.arch.bits)
        if self.arch.bits == 64:
            self._raw_hooks.append(add_raw_hook(self.uc, 
                UC_HOOK_INSN, HOOK_INSN_SYSCALL_CFUNC, self._on_syscall,
                ctypes.c_int(X.UC_X86_INS_SYSCALL)))

    # ---- lifetime ----------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the state of a new Machine, except memory and translated code: the CPU as
        Unicorn creates it, no handlers, no LOCK sites, no instruction counting (a later
        count_instructions flushes the code translated without the counting hook). For a
        Machine taken from the kernel's pool of released ones (kernel_model/memory/space_pool.py)."""
        if self._running:
            raise MachineError("cannot reset a Machine while it runs")
        self.lock_sites.clear()
        self.uc.context_restore(self._pristine)
        self.icount, self._counting = None, False
        self._blocks, self._live = None, self._insns
        self._publish_clock()
        self.trap_handler = self.syscall_handler = self.breakpoint_redirect = None
        self._fast_vector, self._fast_interrupt = -1, None
        if self._int3_sites is not None:
            self._int3_sites.clear_all()
            self._int3_sites.armed = True

    def close(self) -> None:
        """Free the emulator instance and every page of guest memory now, not when the garbage
        collector finds the Uc (its hooks' closures make a cycle, so that can take long: every
        exited process kept its memory). Must not be called while this Machine runs. Afterwards the
        Machine is unusable: `uc` and `mem` are gone, and any use raises instead of touching
        freed memory."""
        if self.uc is None:
            return
        if self._running:
            raise MachineError("cannot close a Machine while it runs")
        binding.close(self.uc)
        self.mem.release()
        self.uc = self.mem = self.cpu_state = self.raw_pc = None
        self._readers = {}
        self._raw_hooks = []
        self._int3_sites = None
        self.trap_handler = self.syscall_handler = self.breakpoint_redirect = None
        self._fast_vector, self._fast_interrupt = -1, None

    @property
    def closed(self) -> bool:
        return self.uc is None

    # ---- contexts (thread switching) -------------------------------------------------------
    def save_context(self):
        return self.uc.context_save()

    def restore_context(self, ctx) -> None:
        self.uc.context_restore(ctx)
        if self._in_syscall_hook:      # the restored PC is architectural; undo Unicorn's +2
            self.raw_pc.write(self.raw_pc.read() - SYSCALL_INSN_LEN)

    # ---- instruction counts (icount.py) ----------------------------------------------------
    def count_instructions(self, clock) -> None:
        """Count every instruction this Machine runs from now on into `clock` (shared by the
        Machines of one run). Code translated before ran without Unicorn's counting hook, so
        the translation cache is flushed once here."""
        if self.icount is clock:
            return
        self.icount = clock
        if not self._counting:
            self._counting = True
            self.uc.ctl_flush_tb()
            from . import block_clock      # a run no tool counts never loads it
            if block_clock.available():
                from .lazy_count import BlockCount
                self._blocks = BlockCount(self)
        self._publish_clock()

    def _publish_clock(self) -> None:
        """The clock's parts changed: the C interrupt hook's copy follows (clock_parts.py)."""
        if self._int3_sites is not None:
            publish(self.clock_parts, self)

    def read_clock(self) -> int:
        """Instructions run so far on this Machine's clock — exact inside a hook too (the
        instruction that raised the event included); 0 when nothing asked for counting.
        One call, no property under it: a probe hit reads it for its record's ts (issue 31),
        and the block count is read here from its two parts (lazy_count.py)."""
        icount = self.icount
        if icount is None:
            return 0
        if not self._running:
            return icount.total
        live = self._live
        if live is self._blocks:
            return icount.total + live.executed.value - live.offset
        return icount.total + live.value

    instructions_retired = property(read_clock)

    # ---- running ---------------------------------------------------------------------------
    def run(self, begin: int, *, count: int = 0, until: int | None = None,
            at_block: bool = False) -> exits.Exit:
        """Run from `begin` until a handler declines an event, a fault, stop(), or `count` insns,
        or the PC reaches `until` (STOPPED); raise StopRequested once the host asked every run
        to end (host_stop.py). `until` stops without a count: a count installs
        Unicorn's counting hook, and the next run without one flushes every translation
        (uc.c uc_emu_start), which a Machine recycled for its translations cannot afford.
        `at_block`: the count may end at the first block boundary at or after it (BUDGET,
        `last_run_insns` what ran), on the block clock where it can be built (quantum_clock.py)."""
        quantum = None
        if at_block and count:
            from .quantum_clock import take      # a run with no quantum never loads it
            quantum = take(self, count)
            if quantum is not None:
                count = 0                 # no budget: the block clock ends the run
        self._exit = None
        self._fault = None
        # A counting Machine always runs with a budget: Unicorn counts only then (icount.py).
        budget = count or self._unlimited_budget()
        if budget and not self._count_hook:
            # Unicorn adds its counting hook for this run without dropping the blocks it
            # translated without it (uc.c uc_emu_start: uc_hook_add, no flush), and those would
            # run uncounted: past the budget, with no instruction counted.
            self.uc.ctl_flush_tb()
        self._count_hook = budget > 0     # Unicorn adds its counting hook, or drops it
        if count:
            self._sticky_runs = STICKY_RUNS
        if until is not None:
            # Unicorn checks the end address only when it translates a block: a block already
            # translated at `until` (a recycled Machine ran this program) would run on.
            self.uc.ctl_remove_cache(until, until + 1)
        self._insns.value = 0             # Unicorn resets its own; a tracker is reset here
        self._live = self._insns if budget or self._blocks is None else self._blocks
        if self._live is self._blocks:
            self._blocks.begin()
        if self._int3_sites is not None and not self._running:
            self._int3_sites.release_retired()
            if not self._int3_sites.installed:
                self._int3_sites.install()
        host_stop.enter(self)             # Ctrl-C, SIGTERM: StopRequested (host_stop.py)
        self._running = True
        self._publish_clock()
        try:
            exit_ = self._run(begin, count, budget, until)
        finally:
            host_stop.leave(self)
            self._account(budget)
            if quantum is not None:
                quantum.end_run()
            if until is not None:
                # The block at `until` was translated as "stop here" (Unicorn checks the run's
                # end address when it translates a block); drop it before a run that passes.
                self.uc.ctl_remove_cache(until, until + 1)
        if quantum is not None:
            exit_ = quantum.ended(self, exit_)
        host_stop.raise_if_pending()      # the run a host request ended goes no further
        return exit_

    def _unlimited_budget(self) -> int:
        """The budget of a run without a count: 0 (no counting hook) or UNLIMITED (keep it).

        A counting Machine always runs with a budget: Unicorn counts only then (icount.py).
        Otherwise: Unicorn installs its counting hook for a run with a budget and, when a
        later run has none, removes it and flushes every translated block (uc.c uc_emu_start:
        "we have to drop all translated blocks"). Runs with an exact budget (--max-insns, an
        instruction alarm, a debugger's step, an exact quantum; the scheduler's quantum is on
        the block clock: quantum_clock.py) come and go: a shell that forked a command ran with
        an exact quantum until it waited, then without, and re-translated its code for every
        command (~1000 blocks). So once the hook is there it stays for the next
        STICKY_RUNS runs without a count (each instruction pays the hook: slower hot code),
        and is dropped, with the one flush, only when the Machine has run alone that long."""
        if self.icount is not None and (self._blocks is None or self.exact_count_users):
            return UNLIMITED
        if self._count_hook and self._sticky_runs > 0:
            self._sticky_runs -= 1
            return UNLIMITED
        return 0

    def _run(self, begin: int, count: int, budget: int, until: int | None = None) -> exits.Exit:
        try:
            self.uc.emu_start(begin, _NEVER_EXECUTED[self.arch.bits] if until is None else until,
                              0, budget)
        except UcError as e:
            # A hook that raised *and* made Unicorn fail (the #UD hook, a memory-fault hook)
            # ends emu_start with the UcError, and the binding drops the hook's exception
            # (it checks the status first): surface the real error with its traceback.
            pending = binding.pending_hook_exception(self.uc)
            if pending is not None:
                raise pending from None
            self.software_interrupt = False      # a fault, not an instruction's int n
            if self._fault is not None:
                access, unmapped, pc = self._fault
                return exits.Exit(exits.FAULT, pc, address=self._walker.fault_address(),
                                  access=access, unmapped=unmapped)
            if self._exit is not None:
                return self._exit
            if e.errno in (UC_ERR_FETCH_UNMAPPED, UC_ERR_FETCH_PROT):
                # Unicorn checks fetches itself, at translation (tlb.py): the address is the
                # byte it could not fetch, in the next page for an instruction across a page end.
                return exits.Exit(exits.FAULT, self.pc, address=self._walker.fault_address(),
                                  access=exits.FETCH, unmapped=e.errno == UC_ERR_FETCH_UNMAPPED)
            raise MachineError(f"emulator error at pc={self.pc:#x}: {e}") from None
        if self._exit is not None:
            return self._exit
        pc = self.pc
        if pc == _NEVER_EXECUTED[self.arch.bits]:
            self.software_interrupt = False
            return exits.Exit(exits.FAULT, pc, address=pc, access=exits.FETCH, unmapped=True)
        return exits.Exit(exits.BUDGET if count else exits.STOPPED, pc)

    def _account(self, budget: int) -> None:
        """Add the finished run's instructions to the clock. A run ended by its budget shows
        budget + 1: the counting hook counted the next instruction, then stopped before it."""
        self._running = False
        self.last_run_insns = min(self._insns.value, budget) if budget else 0
        if self.icount is not None and budget:
            self.icount.add(self.last_run_insns)
        elif self.icount is not None and self._live is self._blocks:
            self.icount.add(self._blocks.value)
        self._publish_clock()

    def _instruction_tracker(self) -> InstructionTracker:
        """The code hook that stands in for private fields not located (insn_tracker.py)."""
        if self._tracker is None:
            self._tracker = InstructionTracker(self.uc, bits=self.arch.bits)
        return self._tracker

    def stop(self) -> None:
        """Ask the current run() to return (exit kind STOPPED unless an event was recorded)."""
        self.uc.emu_stop()

    def _finish(self, exit_: exits.Exit) -> None:
        self._exit = exit_
        self.uc.emu_stop()

    # ---- LOCK-prefix probe sites (lock_sites.py) -------------------------------------------
    def trap_lock_prefix(self, address: int) -> None:
        """Make a 0xf0 byte at `address` raise #UD as a real CPU does (lock_sites.py)."""
        self.lock_sites.trap(address)

    def untrap_lock_prefix(self, address: int) -> None:
        self.lock_sites.untrap(address)

    # ---- hooks -----------------------------------------------------------------------------
    def _on_invalid_instruction(self, uc, _user):
        # #UD is a fault: the saved IP is the instruction itself (Intel SDM Vol. 3A, 6.15).
        pc = self.raw_pc.read()
        self.software_interrupt = False
        self._faulted_at(pc)
        if self._on_kernel_entry is not None:
            self._on_kernel_entry()
        handled = self.trap_handler(6, pc) if self.trap_handler else False
        if not handled or self.raw_pc.read() == pc:
            # declined, or the handler kept the PC on the bad instruction: deliver again later
            self._finish(exits.Exit(exits.TRAP, pc, vector=6))
        return True

    def _faulted_at(self, pc: int) -> None:
        """A fault at `pc`, maybe inside its block: the block clock's count of this run stops
        at that instruction (lazy_count.py). Traps end their block and need nothing."""
        if self._live is self._blocks and self._running:
            self._blocks.fault_at(pc)

    def _on_syscall(self, _handle, _user):
        """The `syscall` instruction (a raw hook: raw_hooks.py)."""
        self._in_syscall_hook = True
        try:
            if self._on_kernel_entry is not None:
                self._on_kernel_entry()
            pc = self.pc
            handled = self.syscall_handler(pc) if self.syscall_handler else False
            if not handled:
                self._finish(exits.Exit(exits.SYSCALL, self.pc))
        except BaseException as error:            # noqa: B036 - re-raised by emu_start
            hook_failed(self.uc, error)
        finally:
            self._in_syscall_hook = False

    def _on_page_fault(self, kind: str, unmapped: bool) -> None:
        """The page walker refused a read or write (tlb.py); Unicorn synced the PC to the
        faulting instruction before asking it, and the run ends with UC_ERR_EXCEPTION."""
        self.software_interrupt = False
        self._fault = (kind, unmapped, self.raw_pc.read())
        self._faulted_at(self._fault[2])
