"""The debug interface: what a tool may observe of the kernel (as ptrace/uprobes offer).

Events are delivered synchronously, in the order they happen, to every subscriber:
  pre_fork(parent, child_pid, vfork)   before the child exists, with the pid it will get
  fork(parent, child), vfork(parent, child)
  fork_failed(parent, child_pid, errno) the fork/vfork announced by pre_fork did not happen
  vfork_done(parent, child)            the vfork parent is about to resume
  exec(process, path, argv)            after a successful execve committed the new image
  exit(process, status)                a process became a zombie (wait status word)
  signal(process, thread, signal, info) a signal is delivered (or takes its default action)
  signal_ignored(process, thread, signal, info)  a signal was taken and ignored (SIG_IGN, or
                                       ignored by default as SIGCHLD is): a tracer sees it still
  space_released(space)                no process uses `space` any more (its last user exited,
                                       or exec replaced its image): the last moment its memory
                                       can be read; then it is freed and its serial is never
                                       seen again. Every table keyed on the space forgets it.
  image_mapped(process, mapped)        a shared object's code was mapped after exec (ld.so
                                       loading a library, dlopen): kernel_model/images.py
  timer_tick(thread, frame)            the profiling timer interrupted `thread`: timer.py
A subscriber is any object with methods of those names (missing ones are skipped).

Gates (US 7,185,320): a tool may put a gate on an address space that several processes share (a
vfork child runs in its parent's Space). While it is there, every tool trap of that space (#BP
at a registered address, #UD at a registered LOCK site) goes to `gate(handler, address, frame,
thread)` instead of the handler, so that the tool can tell which process trapped — the traced
parent's trap goes on to the handler, an untraced child's is the tool's to deal with.

Tracer stops: a tool may leave a thread stopped "waiting for its tracer" (ptrace's
breakpoint stop), and registers itself as a tracer so that a deadlock report can say what the
tool itself waits for (US 7,185,320 FIG. 1).

The tracing facility (kernel_model/debug/tracing/facility.py, US 7,185,320 [0034]-[0037]): a tool traces
a process (attach), sets event flags and options per process or per thread (set_event_mask) and
signals that pass untraced (set_signal_mask); the threads that respond to an event stop and the
tool is told (`tracer.trace_stop(stop)`); it stops threads itself (stop) and resumes them, with
or without a signal (resume). The notifications above go to every subscriber regardless, unless
it subscribed to some events only (`subscribe(tool, events=(...))`).

Registers (PTRACE_GETREGS/SETREGS): a thread's registers are live in its Machine while it is
the one running there, and in its saved context otherwise (sleeping, stopped, runnable but
switched out, a new child before its first run) — kernel.py `_switch_to` keeps that invariant:
context None <=> registers live. `read_register`/`write_register` go to whichever holds them.

Instruction counts: `count_instructions(process)` makes the process's Machine count every
instruction exactly on the run's one InstructionClock (emu/icount.py), the virtual time of a
tool's records; a tool asks for it per process it follows (attach, fork child, exec'd image).
"""
import functools

from emu.errors import MachineError as MemoryFault  # noqa: F401  (no page there: a tool's EFAULT)
from emu.exits import FAULT, READ, WRITE, Exit
from emu.icount import InstructionClock
from emu.registers import REGISTER_IDS

from .access import ProcessAccess
from .detach import DetachAccess
from .patches import PatchAccess, PatchConflict  # noqa: F401  (tools catch PatchConflict)
from .syscall_stops import SyscallStops
from .syscalls import SyscallAccess, SyscallRun  # noqa: F401  (what run_syscall answers)
from .timer import CALLEE_SAVED, WALK_REGISTERS, CapturedFrame, TimerAccess  # noqa: F401  (the sampler's vocabulary)
from .alarms import InstructionTime
from .suspend import ThreadHolds
from .run import RunControl
from .tool_code import ToolCode
from .exe import ExecutableAccess
from .watch import WatchAccess
from ..errors import KernelError, TraceError, VforkParentBusy  # noqa: F401  (tools catch them)
from ..cpu.idt import PF as PAGE_FAULT
from ..process.proc import ZOMBIE
from ..memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE  # noqa: F401  (the page bits tools compare areas with)
from ..signals import SIGSEGV
from .tracing.masks import EventMask, TraceEvent, TraceOption  # noqa: F401  (a tool's vocabulary)
from .tracing.facility import TraceStop, TracingFacility  # noqa: F401
from .tracing.syscall_stops import SyscallTraceStops
from .restartable import RestartableSequences
from .signal_pcs import SignalFramePcs
from .code_aliases import CodeAliases


class DebugInterface(PatchAccess, SyscallAccess, ProcessAccess, SyscallStops, TracingFacility,
                     SyscallTraceStops, RestartableSequences,
                     TimerAccess, ThreadHolds, InstructionTime, RunControl, ToolCode, DetachAccess,
                     ExecutableAccess, WatchAccess,
                     SignalFramePcs, CodeAliases):
    EVENTS = ("pre_fork", "fork", "fork_failed", "vfork", "vfork_done", "exec", "exit", "signal",
              "space_released", "syscall_entry", "syscall_exit", "image_mapped",
              "timer_tick", "timer_tick_batch", "image_unmapped", "thread_switch")

    def __init__(self, kernel=None):
        self._kernel = kernel                                   # for tracer stops
        self._gates: dict[int, object] = {}                     # space.serial -> gate
        self.tracers: list = []                                 # tools: objects with waits_for()
        self.subscribers: list = []
        self._breakpoints: dict[tuple[int, int], object] = {}   # (space.serial, address) -> handler
        self._invalid_opcodes: dict[tuple[int, int], object] = {}  # LOCK-prefix #UD sites
        self._debug_traps: dict[int, object] = {}                 # space.serial -> #DB handler
        self.syscall_watchers: list = []                        # objects with syscall_entry/exit
        # One clock for every process of the run, so that timestamps of parents, fork
        # children and exec'd images are one continuous order.
        self.instruction_clock = InstructionClock()

    # ---- kernel breakpoint handlers (US 9,336,001: the kernel's #BP handler calls the tool's) ----
    def register_breakpoint(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the int3 at `address` in `space` traps;
        it may rewrite frame.ip (IRET then resumes there). True: the guest goes on at once."""
        self._breakpoints[(space.serial, address)] = handler

    def unregister_breakpoint(self, space, address: int) -> None:
        self._breakpoints.pop((space.serial, address), None)
        self.unregister_breakpoint_redirect(space, address)

    def breakpoint_at(self, space, address: int):
        handler = self._breakpoints.get((space.serial, address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    def _gated(self, space, handler, address: int):
        gate = self._gates.get(space.serial)
        return handler if gate is None else functools.partial(gate, handler, address)

    # ---- breakpoint redirects (the int3 fast path, kernel_model/cpu/traps.py) --------------------
    def register_breakpoint_redirect(self, space, address: int, redirect) -> None:
        """For a breakpoint handler (registered first, `register_breakpoint`) that does nothing
        to the trap frame but rewrite its saved IP: `redirect(thread) -> int | None` gives the
        IP the handler would write (running the tool's hooks on the way), or None, before doing
        anything, to send this hit through the full path. The kernel may then take the int3
        without materialising the frame.

        Why that is exact: the frame round trip of a ring-3 int3 through a present DPL-3 gate is
        the identity on everything but the IP (SDM Vol. 3A 6.12.1, IRET's return to the outer
        level); the only difference is the five frame words not written below the thread's
        kernel stack top, memory dead between traps. kernel_model/cpu/traps.py states the argument
        and checks the gate on every use; this interface adds the other precondition: the
        redirect is taken only while the handler it stands in for is still the one the kernel
        would call for the address (breakpoint_at: not replaced by another tool, not behind a
        gate), otherwise the hit goes the full path to whatever is registered now.
        A space without a trap dispatcher (a tool's stand-in), or an interface without a kernel
        to name the trapping thread, keeps the full path only: equivalent, just slower."""
        handler = self._breakpoints.get((space.serial, address))
        if handler is None:
            raise KernelError(f"breakpoint redirect at {address:#x} without a breakpoint handler")
        traps = getattr(space, "traps", None)
        kernel = self._kernel
        if traps is None or kernel is None:
            return
        # breakpoint_at's question, asked on every hit without a call: is `handler` (this very
        # object) still registered, and no gate on the space?
        breakpoints, gates = self._breakpoints, self._gates
        space_id = space.serial
        key = (space_id, address)

        def stand_in():
            if breakpoints.get(key) is not handler or (gates and space_id in gates):
                return None
            return redirect(kernel.current)
        traps.set_breakpoint_redirect(address, stand_in)

    @staticmethod
    def unregister_breakpoint_redirect(space, address: int) -> None:
        traps = getattr(space, "traps", None)
        if traps is not None:
            traps.clear_breakpoint_redirect(address)

    # ---- gates on shared address spaces -----------------------------------------------------
    def set_gate(self, space, gate) -> None:
        """`gate(handler, address, frame, thread) -> bool` sees every tool trap of `space`."""
        self._gates[space.serial] = gate

    def clear_gate(self, space) -> None:
        self._gates.pop(space.serial, None)

    def clear_space(self, space) -> None:
        """Forget every handler of `space` (a detached fork child's copy): its traps, if any
        were left, would be the program's own."""
        key = space.serial
        for site in [k for k in self._breakpoints if k[0] == key]:
            del self._breakpoints[site]
            self.unregister_breakpoint_redirect(space, site[1])
        for site in [k for k in self._invalid_opcodes if k[0] == key]:
            self.unregister_invalid_opcode_site(space, site[1])
        self._debug_traps.pop(key, None)
        self._gates.pop(key, None)
        self.forget_tool_code(space)

    # ---- tracer stops (ptrace's breakpoint stop) ----------------------------------------------
    def register_tracer(self, tracer) -> None:
        """`tracer.waits_for() -> str | None`: what the tool waits for, for deadlock reports."""
        self.tracers.append(tracer)

    def tool_waits(self) -> list[str]:
        return [line for line in (t.waits_for() for t in self.tracers) if line]

    def stop_for_tracer(self, thread, reason: str) -> None:
        """Leave `thread` stopped until its tracer resumes it (resume_from_tracer, or resume)."""
        self._kernel.stop_for_tracer(thread, reason)
        self.record_tool_stop(thread, reason)

    def resume_from_tracer(self, thread) -> None:
        self.forget_tool_stop(thread)
        self._kernel.resume_from_tracer(thread)

    def copy_breakpoints(self, parent_space, child_space) -> None:
        """fork: the child's copy of the memory holds the same int3s (and LOCK patches); give
        them the same handlers (and the child's Machine the same #UD sites), and the same
        table of patches and original bytes (kernel_model/debug/patches.py)."""
        for (space_id, address), handler in list(self._breakpoints.items()):
            if space_id == parent_space.serial:
                self._breakpoints[(child_space.serial, address)] = handler
        for (space_id, address), handler in list(self._invalid_opcodes.items()):
            if space_id == parent_space.serial:
                self.register_invalid_opcode_site(child_space, address, handler)
        if parent_space.serial in self._debug_traps:
            self._debug_traps[child_space.serial] = self._debug_traps[parent_space.serial]
        self.copy_restartable(parent_space, child_space)
        self.copy_code_aliases(parent_space, child_space)
        self.copy_patches(parent_space, child_space)
        self.copy_stale_ranges(parent_space, child_space)     # after a detach (detach.py)

    # ---- #UD sites (US 7,350,196: a LOCK prefix patched over a probed instruction) ----------------
    def register_invalid_opcode_site(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the LOCK patch at `address` raises #UD
        (a fault: frame.ip == address); like a breakpoint handler it may rewrite the frame.
        Unicorn needs to be told where such patches sit (emu/machine.py trap_lock_prefix)."""
        self._invalid_opcodes[(space.serial, address)] = handler
        space.machine.trap_lock_prefix(address)

    def unregister_invalid_opcode_site(self, space, address: int) -> None:
        if self._invalid_opcodes.pop((space.serial, address), None) is not None:
            space.machine.untrap_lock_prefix(address)

    def invalid_opcode_site(self, space, address: int):
        handler = self._invalid_opcodes.get((space.serial, address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    # ---- #DB (single-step traps, TF in the saved flags) ---------------------------------------
    def register_debug_trap(self, space, handler) -> None:
        """`handler(frame, thread) -> bool | None` sees every #DB of `space` first; None means
        "not mine" and the trap takes its usual course (SIGTRAP)."""
        self._debug_traps[space.serial] = handler

    def debug_trap_handler(self, space):
        return self._debug_traps.get(space.serial)

    # ---- operations a tool may perform ------------------------------------------------------
    def current_thread(self):
        """The thread the kernel runs (whose registers are live): inside an event or a trap
        handler, the one that raised it (the forking thread at fork/vfork)."""
        return self._kernel.current

    def deliver_page_fault(self, frame, thread, ip: int, address: int, *, write: bool,
                           unmapped: bool) -> bool:
        """The instruction at `ip`, which a tool ran on the trapped thread's behalf, would have
        page-faulted at `address`: raise #PF as the CPU would (a fault: the saved IP is the
        instruction, SDM Vol. 3A 6.5), with the error and si_addr the kernel gives it."""
        frame.ip, frame.vector, frame.fault_address = ip, PAGE_FAULT, address
        thread.pending_fault = Exit(FAULT, ip, address=address, access=WRITE if write else READ,
                                    unmapped=unmapped)
        return self._kernel.deliver_exception(frame, SIGSEGV)

    def deliver_exception(self, frame, signal: int) -> bool:
        """The trapped thread gets `signal` for the exception `frame` describes, as the kernel
        would have given it had no tool claimed the trap (force_sig_fault): a tool that finds
        the program itself at fault (an emulated store into an unmapped page) hands it back."""
        return self._kernel.deliver_exception(frame, signal)

    @staticmethod
    def live_threads(process) -> list:
        """The threads of `process` that have not exited (/proc/PID/task)."""
        return [thread for thread in process.threads if thread.state != ZOMBIE]

    @staticmethod
    def read_register(thread, name: str) -> int:
        """`thread`'s register `name` (emu/registers.py names), wherever it lives now: the
        Machine for the running thread, its saved context for any other (module docstring)."""
        context = _register_context(thread)
        if context is None:
            return thread.process.machine.reg(name)
        return context.reg_read(REGISTER_IDS[name])

    @staticmethod
    def write_register(thread, name: str, value: int) -> None:
        """Set `thread`'s register `name`; a thread that is not running resumes with it (its
        saved context is what the kernel restores when it switches the thread in)."""
        context = _register_context(thread)
        if context is None:
            thread.process.machine.set_reg(name, value)
        else:
            context.reg_write(REGISTER_IDS[name], value)

    def count_instructions(self, process) -> None:
        """Count every instruction `process` runs from now on, exactly, on the run's one clock
        (emu/icount.py): `instructions_retired` is then the virtual time of its records.
        Idempotent; threads and a vfork child share their Machine, hence its counting. Costs
        ~1.7x on translated code, so only the processes a tool follows are counted."""
        process.machine.count_instructions(self.instruction_clock)

    def syscall_entry(self, thread, name: str, args) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_entry(thread, name, args)

    def syscall_resumed(self, thread, name: str, args) -> bool:
        """A call its tracer stopped at the entry runs now: True if a watcher stops it again
        (the exit stop of exit/exit_group, kernel_model/debug/tracing/syscall_stops.py)."""
        return any(watcher.syscall_resumed(thread, name, args) for watcher in self.syscall_watchers
                   if hasattr(watcher, "syscall_resumed"))

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_exit(thread, name, args, result)

    def subscribe(self, subscriber, events=None) -> None:
        """`subscriber` hears of the events it has methods for; of those in `events` (names
        from EVENTS) only, when given."""
        if events is not None:
            unknown = set(events) - set(self.EVENTS)
            if unknown:
                raise KernelError(f"no debug event {sorted(unknown)[0]!r} (have: {', '.join(self.EVENTS)})")
            subscriber = _Subscription(subscriber, frozenset(events))
        self.subscribers.append(subscriber)

    def _emit(self, event: str, *args, **kwargs) -> None:
        for subscriber in self.subscribers:
            handler = getattr(subscriber, event, None)
            if handler is not None:
                handler(*args, **kwargs)

    def pre_fork(self, parent, child_pid: int, *, vfork: bool) -> None:
        self._emit("pre_fork", parent, child_pid, vfork=vfork)

    def fork(self, parent, child) -> None:
        self._emit("fork", parent, child)
        self.trace_fork(parent, child, vfork=False)

    def fork_failed(self, parent, child_pid: int, errno: int) -> None:
        self._emit("fork_failed", parent, child_pid, errno)

    def vfork(self, parent, child) -> None:
        self._emit("vfork", parent, child)
        self.trace_fork(parent, child, vfork=True)

    def vfork_done(self, parent, child) -> None:
        self._emit("vfork_done", parent, child)
        self.trace_vfork_done(parent, child)

    def exec(self, process, path: bytes, argv) -> None:
        self._emit("exec", process, path, argv)
        self.trace_exec(process)

    def exit(self, process, status: int) -> None:
        self._emit("exit", process, status)
        self.trace_exit(process, status)

    def signal(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._emit("signal", process, thread, signal, info)

    def signal_ignored(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._emit("signal_ignored", process, thread, signal, info)

    def image_mapped(self, process, mapped) -> None:
        """A shared object's code was mapped in `process` after exec (ld.so loading a library,
        a dlopen): `mapped` is its MappedImage. The program and ld.so come with `exec`."""
        self._timer_forget(process)
        self._emit("image_mapped", process, mapped)

    def image_unmapped(self, process, mapped) -> None:
        """An object's first page was unmapped from `process` (dlclose): `mapped` is gone."""
        self._timer_forget(process)
        self._emit("image_unmapped", process, mapped)

    def space_released(self, space) -> None:
        """Tools forget `space` (their tables are keyed on `space.serial`), then so do the
        kernel's handler tables; the kernel frees the space right after."""
        self._emit("space_released", space)
        self.clear_space(space)
        self.forget_cpu(space)
        self.forget_patches(space)
        self.forget_code_breakpoints(space)
        self.forget_watchpoints(space)
        self.forget_stale_ranges(space)
        self.forget_restartable(space)
        self.forget_signal_frame_pcs(space)
        self.forget_code_aliases(space)


class _Subscription:
    """A subscriber that asked for some events only: the others are not its methods."""
    __slots__ = ("subscriber", "events")

    def __init__(self, subscriber, events: frozenset):
        self.subscriber, self.events = subscriber, events

    def __getattr__(self, name: str):
        if name in DebugInterface.EVENTS and name not in self.events:
            raise AttributeError(name)
        return getattr(self.subscriber, name)


def _register_context(thread):
    """The saved context holding `thread`'s registers, or None when they are live in its
    Machine. An exited thread has neither (its context is not saved when it dies)."""
    if thread.state == ZOMBIE:
        raise KernelError(f"tid {thread.tid} has exited: it has no registers")
    return thread.context
