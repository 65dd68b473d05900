"""System-call dispatch: registers -> number and arguments -> implementation -> result.

ABIs (Linux arch/x86/entry/): i386 `int 0x80` passes the number in eax and arguments in
ebx, ecx, edx, esi, edi, ebp; x86-64 `syscall` uses rax and rdi, rsi, rdx, r10, r8, r9. The
result goes back in eax/rax, negative errno on failure. `int 0x80` from 64-bit code still uses
the i386 table and registers, as on Linux with IA32 emulation.

Every guest syscall passes through `handle`, so its own work is kept to what a call needs
(issue 12's budget for a simple call, measured by bench/syscall_overhead.py): each
number is resolved once into a `Call` that also answers the bookkeeping questions, one
SyscallContext per ABI is pointed at each call in turn instead of a new one per call, the
number, the arguments the call takes and the result go through views of the CPU state (a load
or a store each), and the debug interface's entry/exit events (strace, syscall probes) cost
nothing while nobody watches.
"""
import weakref

from .. import errno as E
from ..blocking import ENTRY_HANDED_OVER, MADE_AGAIN, RESTART_SYSCALL, SHOWN_RESTARTED, WouldBlock
from ..errno import GuestErrno
from ..fs.pipe import BrokenPipe
from ..process.proc import RUNNABLE
from ..seccomp import enforce as seccomp
from ..signals import SIGPIPE
from ..time.clock import SYSCALL_COST_NS
from .context import SyscallContext
from .entry_stop import ENTERED as ENTRY_STOPPED
from .numbers import ABIS, numbers
from .registry import NO_RETURN, declaration

WORD_BITS = {"i386": 32, "x86_64": 64}

# Calls that install a temporary signal mask and keep it until a handler runs.
KEEPS_SAVED_MASK = frozenset({"rt_sigsuspend", "sigsuspend"})
# Calls after which the thread is gone: no syscall exit to report (Linux's sys_exit tracepoint
# does not fire for them either; strace prints `= ?`).
ENDS_THE_THREAD = frozenset({"exit", "exit_group"})


BLOCKED = object()          # _run: the call sleeps and will be executed again


def _unimplemented(name: str, nr: int):
    """The implementation of a call the kernel model lacks: -ENOSYS, reported once."""
    def enosys(ctx, *_args) -> int:
        ctx.kernel.report_unimplemented(ctx.proc, name, nr)
        return -E.ENOSYS
    return enosys


class Call:
    """What one syscall number means in one ABI, resolved once: its name, its implementation
    and the properties the dispatcher asks about on every call."""
    __slots__ = ("nr", "name", "fn", "nargs", "outside_hook", "keeps_saved_mask", "ends_thread")

    def __init__(self, nr: int, name: str | None):
        impl = declaration(name) if name else None
        self.nr = nr
        self.name = name or f"syscall_{nr:#x}"
        self.fn = impl.fn if impl else _unimplemented(self.name, nr)
        self.nargs = impl.nargs if impl else 6
        self.outside_hook = bool(impl and impl.outside_hook)
        self.keeps_saved_mask = name in KEEPS_SAVED_MASK
        self.ends_thread = name in ENDS_THE_THREAD


class Convention:
    """One ABI: its calls by number, its register width, the context its calls reuse, and the
    registers of the address space that called last (a run of calls mostly comes from one).
    A number is resolved into its Call when it is first made (`call`), which imports the
    module implementing it (registry.py): a run imports the calls it makes."""
    __slots__ = ("abi", "calls", "bits", "mask", "context", "space", "registers", "_by_space")

    def __init__(self, abi: str):
        self.abi = abi
        self.calls: dict[int, Call] = {}                # the numbers made so far
        self.bits = WORD_BITS[abi]
        self.mask = (1 << self.bits) - 1
        self.context: SyscallContext | None = None      # made on the first call
        self.space = None
        self.registers = None
        # Every live space's registers: processes take turns (a pipeline, a shell and the
        # child it waits for), and building the fetchers again at each turn cost more than a call.
        # Weak: an entry goes with its space.
        self._by_space: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def call(self, nr: int) -> Call:
        """The Call of number `nr`, resolved on its first use; an unknown number's is not kept
        (a fuzzer's random numbers would fill the table)."""
        name = numbers(self.abi).get(nr)
        if name is None:
            return Call(nr, None)
        call = self.calls[nr] = Call(nr, name)
        return call

    def registers_of(self, space) -> tuple:
        """(eax/rax: the number, then the result; `fetch`, where fetch[n]() gives the first n
        argument registers' values; whether the words must be cut to this ABI's width) for
        `space`'s Machine. The result register is a view of the CPU state with a settable
        `value` and the fetchers read the register slots with one itemgetter call
        (emu/cpu_state.py): a load or a store instead of a uclib call, and for a general
        register a store is exactly what uc_reg_write does. Kept in `registers` while `space`
        is the last one that called."""
        if space is not self.space:
            registers = self._by_space.get(space)
            if registers is None:
                registers = self._by_space[space] = self._registers_of(space)
            self.space, self.registers = space, registers
        return self.registers

    def _registers_of(self, space) -> tuple:
        machine = space.machine
        names = space.syscall_abi_registers(self.abi)[0].names
        fetch = tuple(machine.register_fetcher(names[1:1 + n]) for n in range(7))
        # int 0x80 from 64-bit code: the i386 ABI sees the low halves of the registers
        narrow = machine.arch.bits != self.bits
        return machine.register_cell(names[0]), fetch, narrow


class SyscallDispatcher:
    def __init__(self, kernel):
        self.kernel = kernel
        self.conventions = {abi: Convention(abi) for abi in ABIS}
        self._busy = False          # a call is being handled (its convention's context in use)
        self._events = None         # the debug interface's events part, once the first call asks
        self._clock = kernel.clock  # the run's VirtualClock: each call ticks it

    def _bind_events(self):
        """The door's events part (kernel_model/debug/events.py): its `syscall_watchers` is
        the current list (replaced when a tool leaves), read at every call without the
        door's two property lookups."""
        self._events = self.kernel.debug.syscall_events
        return self._events

    def handle(self, thread, abi: str, frame, *, in_hook: bool) -> bool:
        """Run the call in `thread`'s registers, as xv6's syscall() does: decode the number and
        the arguments, run the implementation, finish (the result into eax/rax, the thread's
        bookkeeping). False: the run loop must take over."""
        convention = self.conventions[abi]
        space = thread.process.space
        eax, fetch, narrow = convention.registers if space is convention.space \
            else convention.registers_of(space)
        nr = eax.value & convention.mask
        call = convention.calls.get(nr) or convention.call(nr)
        if in_hook and call.outside_hook:
            thread.deferred = True
            return False
        observed = (self._events or self._bind_events()).syscall_watchers
        if observed:                # told only when a watcher watches this call (events.py)
            observed = self.kernel.debug.syscall_watchers_of(call.name)
        if observed or narrow:
            args = self._decode(convention, call, fetch, narrow, observed)
        else:                       # _decode's common case, without its call
            args = fetch[call.nargs]()
        # The call's cost: the clock's tick (clock.py tick_syscall) is the caller's system
        # time (time/task_times.py charge_system). Written out: this is the path of every call.
        self._clock.elapsed_ns += SYSCALL_COST_NS
        thread.stime_ns += SYSCALL_COST_NS
        thread.process.stime_ns += SYSCALL_COST_NS
        ctx = convention.context                # pointed at this call (SyscallContext.bind)
        if ctx is None or self._busy:
            ctx = self._new_context(convention, thread)
        if ctx.thread is not thread or ctx.space is not space:
            ctx.bind(thread, frame)
        else:
            ctx.frame = frame
        if observed or thread.restart or thread.task_flags.seccomp_mode:
            return self._watched_or_restarted(ctx, convention, call, (eax, fetch, narrow), args,
                                              observed, in_hook)
        # nearly every call: nobody watches it, it is not made again, no seccomp filter
        result = self._run(ctx, call, args)
        if result is BLOCKED:
            return False
        return self._finish(ctx, call, eax, result, None)

    def _watched_or_restarted(self, ctx: SyscallContext, convention: Convention, call: Call,
                              registers, args, observed, in_hook: bool) -> bool:
        """handle's rest for a call the tools watch, one made again, or one a seccomp filter
        judges: the tracer's entry stop and hand-over, the filter's verdict, then the call."""
        thread, frame, abi = ctx.thread, ctx.frame, ctx.abi
        eax, fetch, narrow = registers
        # a call entered anew: not one re-executed after its entry stop or a sleep
        fresh = observed and ((thread.blocked_call is None and (
            not thread.restart or ENTRY_HANDED_OVER not in thread.restart)) or MADE_AGAIN in thread.restart)
        if observed and self._report_entry(ctx, call, args):
            # Its tracer stopped it at the call's entry and may have changed its registers:
            # still stopped, it executes the call again once resumed (as a call that sleeps);
            # resumed already, the call is decoded again now. Either way it is not re-entered.
            if thread.state != RUNNABLE:
                self._rewind(thread, frame)
                return False
            return self.handle(thread, abi, frame, in_hook=in_hook)
        if fresh and self._hands_over(thread):
            # its tracer's entry stop: the others run first; then the call, entered already
            thread.restart[ENTRY_HANDED_OVER] = True
            self._rewind(thread, frame)
            return False
        if thread.restart:
            thread.restart.pop(ENTRY_HANDED_OVER, None)      # running now: signals wait for it
        if thread.task_flags.seccomp_mode:     # after the tracer's entry stop, as Linux's
            result = self._seccomp(ctx, convention, call, fetch, narrow)  # syscall_trace_enter
            if result is seccomp.KILLED:
                return False
            if result is not None:
                return self._finish(ctx, call, eax, result, args if observed else None)
        result = self._run(ctx, call, args[:call.nargs] if observed else args)
        if result is BLOCKED:
            return False
        return self._finish(ctx, call, eax, result, args if observed else None)

    # ---- decode, run, finish -----------------------------------------------------------------
    def _decode(self, convention: Convention, call: Call, fetch, narrow: bool, observed):
        """The arguments from their registers: those the implementation takes, or all six
        (as a list the watchers may look at) when the debug interface's events show them."""
        args = fetch[6 if observed else call.nargs]()
        if narrow:                  # int 0x80 from 64-bit code: the low halves
            mask = convention.mask
            args = tuple(a & mask for a in args)
        return list(args) if observed else args

    def _seccomp(self, ctx: SyscallContext, convention: Convention, call: Call, fetch, narrow: bool):
        """The seccomp verdict on this call (kernel_model/seccomp/enforce.py): None to run it."""
        def six_arguments():
            return tuple(a & convention.mask for a in fetch[6]()) if narrow else fetch[6]()
        ip = ctx.frame.ip if ctx.frame is not None else ctx.proc.machine.pc
        return seccomp.check(self.kernel, ctx.thread, convention.abi, call.name, call.nr, ip,
                             six_arguments)

    def _run(self, ctx: SyscallContext, call: Call, args):
        """The implementation's result (>= 0, -errno, or NO_RETURN), or BLOCKED when the call
        sleeps and will run again (_restart_later)."""
        self._busy = True
        try:
            return call.fn(ctx, *args)
        except BrokenPipe as e:
            # Linux pipe_write: EPIPE, and SIGPIPE to the writer (send_sig(SIGPIPE, current)).
            # send_sig(SIGPIPE, current, 0): SI_USER from the writer itself
            from ..signals.sender import sent_by        # not at start-up
            self.kernel.signals.post(ctx.proc, SIGPIPE, thread=ctx.thread,
                                     info=sent_by(ctx.proc, 0))
            return -e.errno
        except GuestErrno as e:
            return -e.errno
        except WouldBlock as blocked:
            self._restart_later(ctx.thread, ctx.frame, blocked, call.name)
            return BLOCKED
        finally:
            self._busy = False

    def _finish(self, ctx: SyscallContext, call: Call, eax, result, observed_args) -> bool:
        """The call completed: forget its restart state and a mask it no longer needs, store
        its result, tell the watchers; whether the thread goes on running."""
        thread, kernel = ctx.thread, self.kernel
        shown = call.name
        if thread.restart:
            if thread.restart.get(SHOWN_RESTARTED):
                shown, observed_args = RESTART_SYSCALL, observed_args and []
            thread.restart.clear()
        thread.blocked_call = None
        if thread.saved_sigmask is not None and not call.keeps_saved_mask:
            thread.sigmask, thread.saved_sigmask = thread.saved_sigmask, None
        if result is not NO_RETURN:
            eax.value = result & ctx.mask
        if observed_args is not None:
            self._report_exit(ctx, call, observed_args, result, shown)
            if not call.ends_thread and thread.state == RUNNABLE and kernel.current is thread \
                    and self._hands_over(thread):
                return False                    # its tracer's exit stop: the others run
        if thread.pending_signals or thread.process.pending_signals:
            return kernel.may_continue(thread)
        # Nothing pending, so nothing is deliverable: kernel.may_continue's other three
        # questions, without its two calls (this is the path of nearly every call).
        return thread.state == RUNNABLE and kernel.current is thread \
            and kernel.scheduler.preempting is None

    def _hands_over(self, thread) -> bool:
        """A syscall stop of `thread`'s tracer lets the next runnable thread run (process/
        sched.py hand_over); False, and nothing changed, when no other thread can run or no
        tool stops `thread` at its calls."""
        scheduler = self.kernel.scheduler
        if not scheduler.others_runnable(thread) or not self.kernel.debug.stops_at_syscalls(thread):
            return False
        scheduler.hand_over(thread)
        return True

    def _new_context(self, convention: Convention, thread) -> SyscallContext:
        """The convention's reusable context on its first call; a fresh one should a call ever
        be handled while another is still running."""
        ctx = SyscallContext(self.kernel, thread, convention.abi)
        if not self._busy:
            convention.context = ctx
        return ctx

    # ---- observers: the debug interface's syscall events ------------------------------------
    def _report_entry(self, ctx: SyscallContext, call: Call, args) -> bool:
        """Tell the watchers a call starts (a restarted call entered once already); whether
        the thread's tracer stopped it there (kernel_model/debug/tracing/syscall_stops.py)."""
        thread = ctx.thread
        made_again = thread.restart.pop(MADE_AGAIN, False) if thread.restart else False
        if thread.restart and not made_again:
            # entered once: only an exit stop may still be due
            return ENTRY_STOPPED in thread.restart and \
                self.kernel.debug.syscall_resumed(thread, call.name, args)
        thread.syscall_abi = ctx.abi
        if made_again == RESTART_SYSCALL:      # Linux makes restart_syscall, without arguments
            thread.restart[SHOWN_RESTARTED] = True
            self.kernel.debug.syscall_entry(thread, RESTART_SYSCALL, [])
            return ENTRY_STOPPED in thread.restart
        self.kernel.debug.syscall_entry(thread, call.name, args)
        return bool(thread.restart) and ENTRY_STOPPED in thread.restart

    def _report_exit(self, ctx: SyscallContext, call: Call, args, result, shown: str) -> None:
        ctx.thread.syscall_abi = ctx.abi
        if not call.ends_thread:
            if result is NO_RETURN:
                # sigreturn's result is the restored eax/rax, execve's the new image's (0),
                # as Linux's sys_exit reports them: what the thread's register holds now.
                result_reg = ctx.thread.process.space.syscall_abi_registers(ctx.abi)[1]
                result = result_reg.read() & ctx.mask
            self.kernel.debug.syscall_exit(ctx.thread, shown, args, result)

    def _restart_later(self, thread, frame, blocked: WouldBlock, name: str) -> None:
        """Sleep, then execute the same call again: rewind to the `int 0x80`/`syscall`
        instruction (both 2 bytes) with the call number still in eax/rax."""
        self._rewind(thread, frame)
        self.kernel.block(thread, blocked, name)

    @staticmethod
    def _rewind(thread, frame) -> None:
        """Back to the `int 0x80`/`syscall` instruction, to execute the call again."""
        if frame is not None:
            frame.ip -= 2
        else:
            machine = thread.process.machine
            machine.pc = machine.pc - 2
