"""The modeled kernel: processes, the run loop, and how events from the Machine are handled.

The run loop (xv6's scheduler()) picks a thread, loads its registers into its address space's
Machine, and runs it until it blocks, exits, makes a call that must run outside Unicorn's hooks,
faults, or — while another thread is runnable — uses up its quantum.

Mixed in from their own files: starting the first process (process/spawn.py) and the paths
by which a system call enters the kernel (syscalls/entry.py).
"""
import sys
from dataclasses import dataclass

from emu import exits

from .cpu import idt as V
from .blocking import CONDITION_MET, WouldBlock, completes_first
from .process.wait_children import wake_waiters
from .time.clock import VirtualClock
from .time.cpu_time import CpuTime
from .time.task_times import charge_user
from .debug import DebugInterface
from .debug.access import symbolize
from .errno import GuestErrno
from .errors import KernelError
from .process.exit import exit_process, exit_thread
from .fs import FileSystem
from .net.inet_ports import InetPorts
from .time.itimer import IntervalTimers
from .time.posix_timers import PosixTimers
from .time.timer_list import TimerList
from .time.timerfd_timers import TimerFds
from .panic import is_kernel_bug, run_loop_panic
from .process.proc import RUNNABLE, ZOMBIE, Process, Thread
from .process.sched import DEFAULT_QUANTUM, TRACER_STOP, Scheduler
from .process.spawn import Spawning
from .signals.delivery import Signals
from .memory.futex_key import futex_key
from .memory.map_count import MapCountSysctl
from .memory.space_pool import POOL_SIZE, SpacePool
from .task_limit import TaskLimit
from .signals import signal_name
from .syscalls.dispatch import SyscallDispatcher
from .syscalls.entry import SyscallEntry
from .fsview import INIT_VIEW, fs_view
from .lazy_tables import LazyTables
from .proc_entries import register_proc_entries
from .ipc.namespace import IpcNamespace
from .fs.leases import Leases
from .fs.locks import LockTable
from .user_faults import deliver_exception, page_fault
from .idt_handlers import install_idt_handlers

FIRST_PID = 100          # pids start at a fixed number: no host pid leaks into a run


class Deadlock(KernelError):
    """Nothing can run and something waits: the run stops with the kernel's report."""


class InstructionBudgetExceeded(KernelError):
    """--max-insns ran out."""


@dataclass
class KernelConfig:
    """What a run's kernel is made with: the file system, stdio, limits and scheduling."""
    rootfs: str | None = None
    writable: bool = False
    seed: int = 0
    cwd: bytes = b"/"
    stdin: object = None          # OpenFile objects for fds 0, 1, 2
    stdout: object = None
    stderr: object = None
    verbose: bool = False
    report: object = None         # where trapline's own messages go (default: host stderr)
    memory_limit: int = 4 << 30
    quantum: int = DEFAULT_QUANTUM
    exact_quantum: bool = False   # a quantum ends at its instruction, not its block (sched.py)
    max_tasks: int = 256          # processes + threads alive at once (fork bombs get EAGAIN)
    max_insns: int = 0            # 0: no instruction budget
    space_pool: int = POOL_SIZE   # released Machines kept for their translated code (0: none)


class Kernel(Spawning, SyscallEntry, LazyTables):
    # What every system call and every slice of the run loop reads, and the process table, as
    # slots; the rest, with LazyTables' cached properties, in the instance's dict: CPython 3.11
    # shares an instance dict's names with its class only up to 30 (Objects/dictobject.c
    # SHARED_KEYS_MAX_SIZE), and past that every attribute read became a slower lookup in a
    # dict of its own (tests/unit/kernel_model/test_attribute_layout.py keeps it under).
    __slots__ = ("clock", "current", "scheduler", "in_hook", "debug", "syscalls", "signals",
                 "_syscall_space", "_syscall_views", "insns_used", "cpu_time", "timer",
                 "fs", "processes", "next_pid", "exec_count", "space_pool", "task_limit",
                 "processes_created", "reaped_count")

    def __init__(self, config: KernelConfig):
        self.config = config
        self.clock = VirtualClock()
        self.cpu_time = CpuTime(self.clock)
        self.fs = FileSystem(config.rootfs, writable=config.writable, seed=config.seed,
                             clock=self.clock.realtime_ns)
        self.fs.data_budget.allows = self._memory_budget_allows    # overlay bytes are memory
        self.fs.notify.current = lambda: self.current     # whose task causes an event
        self.syscalls = SyscallDispatcher(self)
        register_proc_entries(self)       # UTS names, config.gz, version, key-users (proc_entries.py)
        self.map_count = MapCountSysctl(self)     # vm.max_map_count (memory/map_count.py)
        self.inet_ports = InetPorts()     # the loopback network's bound ports
        self.locks = LockTable(self.wakeup, Leases(      # fcntl record locks and leases (fs/)
            self.wakeup, self.clock.monotonic_ns, lambda: self.fs.tunables.lease_break_time))
        self.ipc = IpcNamespace(self.wakeup)   # System V queues, semaphores, segments (ipc/)
        self.ipc.publish(self.fs)
        self.signals = Signals(self)
        self.scheduler = Scheduler(self.clock, config.quantum, exact=config.exact_quantum)
        self.timerfds = TimerFds()
        self.scheduler.timers = TimerList(IntervalTimers(self), PosixTimers(self), self.timerfds)
        self.debug = DebugInterface(self)
        self.processes: dict[int, Process] = {}
        self.fs.list_processes(self._process_views)
        self.fs.account_time(lambda: self.clock.elapsed_ns, self.clock.monotonic_ns,
                             lambda: self.clock.idle_ns)
        self.processes_created = 0        # every process the run made (spawn, fork, vfork)
        self.task_limit = TaskLimit(config.max_tasks)
        self.reaped_count = 0
        self._releasing: list = []        # spaces nobody uses, freed once no Machine runs
        self.space_pool = SpacePool(config.space_pool)    # released Machines kept for their code
        self.next_pid = FIRST_PID
        self.exec_count = 0
        self.current: Thread | None = None
        self.in_hook = False
        self._syscall_space = self._syscall_views = None     # _syscall_instruction (syscalls/entry.py)
        self.messages: list[str] = []
        self.unimplemented: dict[str, int] = {}
        self._random_offset = 0
        self._pipe_ino = 0
        self.insns_used = 0
        self.timer = None                 # the profiling timer a tool armed (time/timer.py), or None

    # ---- messages --------------------------------------------------------------------------
    def report(self, text: str, *, always: bool = True) -> None:
        """trapline's own diagnostics: kept in `messages`, and printed on the report stream
        unless it is a remark only -v asks for (a program's stderr is the program's)."""
        self.messages.append(text)
        if not (always or self.config.verbose):
            return
        out = self.config.report or sys.stderr
        out.write(f"trapline: {text}\n")
        out.flush()

    def report_unimplemented(self, proc: Process, name: str, nr: int) -> None:
        if name not in self.unimplemented:
            self.unimplemented[name] = nr
            self.report(f"unimplemented syscall {name} (nr {nr}) returns -ENOSYS", always=False)

    def random_bytes(self, count: int) -> bytes:
        """The next `count` bytes of the run's getrandom stream (from --seed, never the host)."""
        from .syscalls.impls.timecalls import seeded_stream
        data = seeded_stream(self.config.seed, b"getrandom", self._random_offset, count)
        self._random_offset += count
        return data

    def next_pipe_ino(self) -> int:
        self._pipe_ino += 1
        return 0x1000 + self._pipe_ino

    # ---- processes -------------------------------------------------------------------------
    def check_task_limit(self, thread: Thread) -> None:
        """EAGAIN at the task limit; a guest that keeps forking there with nothing ending is a
        runaway (task_limit.py): its slice ends and the run loop stops the run."""
        try:
            self.task_limit.check(len(self.scheduler.threads), thread.tid)
        except GuestErrno:
            if self.task_limit.runaway is None and self.task_limit.is_runaway():
                alive = sum(1 for p in self.processes.values() if p.state != ZOMBIE)
                self.task_limit.stop(alive, len(self.scheduler.threads) - alive,
                                     self.processes_created)
                if self.in_hook:
                    thread.process.machine.stop()
            raise

    def install_space(self, space) -> None:
        install_idt_handlers(self, space)
        space.traps.set_frameless_handler(V.SYSCALL_VECTOR, self._int80_frameless)
        space.machine.syscall_handler = self._on_syscall_instruction
        space.vm.budget_allows = self._memory_budget_allows
        self.map_count.apply(space)

    def _process_views(self) -> dict:
        """What /proc/PID shows, by pid: the sandbox's init and every process of the run."""
        return {INIT_VIEW.pid: INIT_VIEW, **{pid: fs_view(p) for pid, p in self.processes.items()}}

    def _memory_budget_allows(self, extra: int) -> bool:
        """--memory limit over all live address spaces and the overlay's file bytes together
        (fork bombs get ENOMEM, a file filling memory ENOSPC: fs/databudget.py)."""
        spaces = {p.space.serial: p.space for p in self.processes.values()
                  if p.state != ZOMBIE and p.space is not None}
        used = sum(space.vm.mapped_bytes() for space in spaces.values()) + self.fs.data_budget.used
        return used + extra <= self.config.memory_limit

    # ---- address-space lifetime -------------------------------------------------------------
    def release_space(self, space) -> None:
        """Free `space` once no live process uses it (a zombie keeps its status, not its memory;
        exec drops the old image once the new one is committed). Deferred to the run loop: the
        space's Machine may be the one running this very syscall."""
        if space is None or space.released or any(s is space for s in self._releasing):
            return
        if any(p.space is space and p.state != ZOMBIE for p in self.processes.values()):
            return                        # a thread group, or a vfork parent and its child
        self._releasing.append(space)

    def _release_pending(self) -> None:
        while self._releasing:
            space = self._releasing.pop(0)
            self.debug.space_released(space)
            if not self.space_pool.keep(space):
                space.release()
            space.vm.vmas = []            # a zombie's /proc/PID/maps is empty, as on Linux

    def add_process(self, proc: Process, thread: Thread) -> None:
        self.processes[proc.pid] = proc
        self.processes_created += 1
        self.scheduler.add(thread)

    def add_thread(self, thread: Thread) -> None:
        self.scheduler.add(thread)

    # ---- the run loop ----------------------------------------------------------------------
    def run(self, proc: Process) -> int:
        """Run until every process has exited; return the first process's wait status."""
        try:
            return self._run(proc)
        except Exception as e:          # a kernel bug: KernelPanic with a report (panic.py)
            if is_kernel_bug(e):
                raise run_loop_panic(self.current, e, "running the guests") from e
            raise
        finally:
            self.space_pool.close()

    def _run(self, proc: Process) -> int:
        preempted = False
        alarms = self.debug.instruction_alarms
        while True:
            if self.task_limit.runaway is not None:
                raise self.task_limit.runaway
            if alarms:
                alarms.fire()           # a safe point: between instructions, outside hooks
            control = self.debug.run_controller      # a debugger's (kernel_model/debug/run.py)
            if control is not None:
                control.schedule_point()
            if preempted:
                thread = self.scheduler.rotate(self.current)
            else:
                thread = self.scheduler.pick(self.current)
            thread = self.debug.sequence_to_finish(self.current, thread)   # debug/restartable.py
            if control is not None and thread is not None:
                thread = control.choose(thread)
            if thread is None:
                if control is not None and control.idle():
                    continue                # its user holds what could run (debug/run.py)
                if self.scheduler.threads:
                    raise Deadlock(self.scheduler.deadlock_report(self.debug.tool_waits()))
                break
            if self.debug.holds_stopped(thread):        # stopped by its tracer where it slept
                continue
            if preempted or thread is not self.current:
                self.scheduler.new_turn(thread)
            self._switch_to(thread)
            if self.signals.deliverable(thread) and not completes_first(thread):
                if thread.ptrace:       # its EINTR call ends before its tracer's stop
                    from .signals.traced_calls import end_sleep_for_tracer
                    end_sleep_for_tracer(self.signals, thread)
                if control is not None and control.intercept_signal(thread):
                    continue                        # the debugger sees it first (debug/run.py)
                self.signals.deliver(thread)        # on the way back to user mode
                if thread.state != RUNNABLE:
                    continue
            machine = thread.process.machine
            count = self.scheduler.slice_for(thread)
            if self.config.max_insns:
                left = self.config.max_insns - self.insns_used
                if left <= 0:
                    raise InstructionBudgetExceeded(
                        f"instruction budget of {self.config.max_insns} used up")
                count = min(count or left, left)
            if control is not None:
                count = control.slice_count(thread, count)
                self.debug.arm_interrupt(machine)   # a Ctrl-C stops it at a block (debug/run.py)
            charged = count
            count, by_alarm = alarms.cap(count, machine)      # a tool's alarm: time/insn_alarms.py
            at_block = not (self.scheduler.exact or self.config.max_insns or control is not None
                            or alarms.watch(machine))   # a quantum ends at a block: quantum_clock.py
            self.cpu_time.begin(machine)
            self.in_hook = True
            try:
                if self.timer is None:
                    exit_ = machine.run(machine.pc, count=count, at_block=at_block)
                else:                               # interrupted at every tick (time/timer.py)
                    exit_ = self.timer.run(thread, machine, count, at_block)
            finally:
                self.in_hook = False
            preempted = exit_.kind == exits.BUDGET and not by_alarm
            # Charge what ran: less when a syscall, fork or fault ended it, more at a block's end
            ran = machine.last_run_insns if self.timer is None else self.timer.slice_insns
            self.cpu_time.end(thread, ran if preempted else 0)      # 1 ns per instruction
            charge_user(thread, ran if preempted else 0)            # time/task_times.py
            self._release_pending()
            if charged:
                self.insns_used += ran
                preempted = self.scheduler.turn_over(thread, ran) or preempted
            self._handle_exit(thread, exit_)
            if control is not None:
                control.after_slice(thread, exit_)
            self._release_pending()
        return proc.exit_status

    def _switch_to(self, thread: Thread) -> None:
        """Load `thread`'s registers. Invariant: a thread whose registers are live in its
        Machine has context None; every other thread has a saved context."""
        previous = self.current
        if previous is not None and previous is not thread and previous.context is None \
                and previous.state != ZOMBIE:
            self.debug.restart_sequence(previous)      # debug/restartable.py (rseq)
            previous.context = previous.process.machine.save_context()
        if thread.context is not None:
            thread.process.machine.restore_context(thread.context)
            thread.context = None
            space = thread.process.space
            space.current_kstack_top = thread.kstack_top
            for index, desc in thread.tls.items():      # this thread's TLS descriptors
                space.gdt.set_entry(index, desc)
        self.current = thread

    def _handle_exit(self, thread: Thread, exit_: exits.Exit) -> None:
        deferred = getattr(thread, "deferred", False)
        thread.deferred = False
        if exit_.kind == exits.SYSCALL and deferred:
            self._syscall_instruction(thread, exit_.pc, in_hook=False)
        elif exit_.kind == exits.TRAP and deferred:
            thread.process.space.traps.dispatch(exit_.vector, exit_.pc)
        elif exit_.kind == exits.FAULT:
            page_fault(self, thread, exit_)

    def may_continue(self, thread: Thread) -> bool:
        """After a call inside the hook: keep running unless the thread must stop here
        (it sleeps, died, another thread is current, its call woke a thread that preempts it:
        process/sched.py, or a signal awaits delivery)."""
        return thread.state == RUNNABLE and self.current is thread \
            and self.scheduler.preempting is None and not self.signals.deliverable(thread)

    # ---- sleeping --------------------------------------------------------------------------
    def wakeup(self, channel) -> None:
        self.scheduler.wakeup(channel)

    def block(self, thread: Thread, blocked: WouldBlock, call: str) -> None:
        channels = blocked.channel if isinstance(blocked.channel, list) else [blocked.channel]
        thread.blocked_call = blocked.call or call
        thread.restart.pop(CONDITION_MET, None)       # asleep again: it waits for a new one
        self.scheduler.sleep(thread, channels, blocked.reason, blocked.deadline_ns)
        if self.signals.deliverable(thread):          # a signal already waits: do not sleep
            self.scheduler.make_runnable(thread)
        if self.in_hook:
            thread.process.machine.stop()

    def sleep_after_return(self, thread: Thread, channel, reason: str) -> None:
        """Sleep once the current call has returned its value (the vfork parent)."""
        self.scheduler.sleep(thread, [channel], reason, None)

    def stop_for_tracer(self, thread: Thread, reason: str) -> None:
        """A traced thread's stop (ptrace-stop at a breakpoint) until its tracer resumes it;
        a thread woken otherwise re-executes its trap and stops again (as on Linux)."""
        self.scheduler.sleep(thread, [tracer_channel(thread)], reason, None)
        if self.in_hook:
            thread.process.machine.stop()

    def resume_from_tracer(self, thread: Thread) -> None:
        if tracer_channel(thread) in thread.wait_channels:
            self.scheduler.make_runnable(thread)

    def futex_wake(self, proc: Process, uaddr: int, count: int, private: bool = False) -> int:
        key = futex_key(proc.space, uaddr, private)
        woken = 0
        for t in self.scheduler.threads:
            if woken >= count:
                break
            if t.state != RUNNABLE and key in t.wait_channels:
                t.restart["futex_woken"] = True
                t.restart["futex_woken_key"] = key       # which one, for futex_waitv
                t.restart[CONDITION_MET] = True       # a signal before it runs: still woken
                self.scheduler.make_runnable(t)
                woken += 1
        return woken

    def arm_itimer(self, proc: Process, value_ns: int, interval_ns: int) -> None:
        """ITIMER_REAL / alarm: SIGALRM when the virtual clock reaches the deadline."""
        proc.itimer_real = (self.clock.monotonic_ns() + value_ns, interval_ns) if value_ns else None
        if value_ns:
            self.timer_armed()

    def timer_armed(self) -> None:
        """A timer was armed (ITIMER_REAL, a POSIX timer)."""
        if self.in_hook and self.current is not None:
            # The running slice was sized without this deadline (process/sched.py slice_for: no limit
            # when nothing else waits): end it, so the next one stops at the timer's quanta.
            self.current.process.machine.stop()

    def notify_parent(self, parent: Process, child: Process) -> None:
        wake_waiters(self, parent, child)          # the waits `child` is eligible for
        if child.exit_signal:
            from .signals.sender import status_for_sigchld        # not at start-up
            self.signals.post(parent, child.exit_signal, info=status_for_sigchld(child))

    # ---- faults and death ------------------------------------------------------------------
    def deliver_exception(self, frame, signal: int) -> bool:
        return deliver_exception(self, frame, signal)

    def symbolize(self, proc: Process, addr: int) -> str:
        return symbolize(proc, addr)

    def kill(self, proc: Process, signal: int, detail: str = "", *, core: bool = False,
             info: dict | None = None) -> None:
        """Terminate `proc` by `signal`; `info`: a delivered signal's siginfo (strace prints it)."""
        if detail:
            self.report(f"pid {proc.pid} killed by {signal_name(signal)}: {detail}")
        self.debug.signal(proc, None, signal, info)
        self.terminate(proc, signal | (0x80 if core else 0))

    def exit_process(self, proc: Process, code: int) -> None:
        self.terminate(proc, (code & 0xFF) << 8)

    def exit_thread(self, thread: Thread, code: int) -> None:
        if len(thread.process.live_threads()) <= 1:
            self.exit_process(thread.process, code)
            return
        exit_thread(self, thread)
        if self.in_hook:
            thread.process.machine.stop()

    def terminate(self, proc: Process, status: int) -> None:
        machine = proc.machine if proc.space is not None else None
        exit_process(self, proc, status)
        if self.in_hook and machine is not None:
            machine.stop()


def tracer_channel(thread: Thread) -> tuple:
    """What a thread in a tracer stop sleeps on (sched.deadlock_report recognises it)."""
    return (TRACER_STOP, thread.tid)


def wait_status_exit_code(status: int) -> int:
    """Shell convention: exit code, or 128+N after death by signal N."""
    return 128 + (status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF
