"""A debugger on the debug interface that sees through the instrumentation (US 6,957,421,
US 6,957,421: providing debugging capability for instrumented code).

All-stop, as GDB's default: the debugger is the kernel's run controller (kernel_model/
debug/run.py), so between two slices of guest execution it may stop the world — no thread
runs while `on_stop(event)` talks to the user — and it resumes by returning from it, with
each thread told to continue or to step.

Seeing through the probes:
  * breakpoints are code breakpoints (nothing patched), so they coexist with a probe at the
    same address: the stop happens before the probed instruction, and when the thread goes
    on, the probe's int3/jump runs as without the debugger — both the stop and the record;
  * memory reads show the original bytes under every patch (memory.py);
  * the PC of a thread inside tool code is shown as its original address (addrmap.py), and a
    step runs machine instructions until exactly one ORIGINAL instruction has run: through
    the int3 and the relocated copy of a trampoline probe, or the one emulated trap of an
    emulate probe (stepping.py).
"""
from .addrmap import ToolAddressMap
from .execs import ExecEvents
from .forks import ForkEvents
from .holds import UserHolds
from .events import BREAKPOINT, EXITED, INITIAL, INTERRUPT, SIGINT, SIGNAL, StopEvent
from .memory import ShadowedMemory
from .registers import ThreadRegisters
from .stepping import Stepper
from .watchpoints import Watchpoints


class Debugger(ForkEvents, ExecEvents, UserHolds, Watchpoints):
    def __init__(self, debug, session=None, *, on_stop=None):
        self.debug = debug
        self.session = session
        self.on_stop = on_stop                   # callable(StopEvent): returns to resume
        self.addrmap = ToolAddressMap(debug, session)
        self.registers = ThreadRegisters(debug, self.addrmap)
        self.memory = ShadowedMemory(debug, session)
        self.stepper = Stepper(self)
        self.pids: list[int] = []                # the debugged processes, in order
        self.processes: dict[int, object] = {}
        self.breakpoints: dict[int, set[int]] = {}   # pid -> addresses (GDB's are per process)
        self.carried: dict[tuple, int] = {}      # (pid, tool copy address) -> its breakpoint's
        self.watchpoints: dict[int, set] = {}   # pid -> (address, length, kind) (watchpoints.py)
        self._watch_hits: dict[int, tuple] = {}  # tid -> (kind, address) its slice stopped for
        self.pending: list[StopEvent] = []
        self.last_stop: StopEvent | None = None
        self.detached = False
        self.interrupt_requested = False
        self.stopped = False                     # inside on_stop: the world is stopped
        self._resuming: dict[int, int] = {}      # tid -> the breakpoint address it resumes from
        self.pass_signals: set[int] = set()      # delivered without a stop (handle ... nostop)
        self._held: dict[int, tuple] = {}        # tid -> (signal, siginfo) taken at its stop
        self._passing: dict[int, int] = {}       # tid -> the signal it is given back to deliver
        self._holds: list = []                   # threads held until the next resume (holds.py)

    # ---- attaching ---------------------------------------------------------------------------
    def attach(self, process) -> None:
        """Debug `process` from here on; the first schedule point stops it (INITIAL)."""
        self.add_process(process)
        self.debug.subscribe(self)
        self.debug.set_run_controller(self)
        self.pending.append(StopEvent(INITIAL, thread=self.debug.live_threads(process)[0]))

    def add_process(self, process, breakpoints=()) -> None:
        """Debug `process` too (a fork child keeps the breakpoints its parent had, as it
        would keep the int3s in its copy of the memory)."""
        if process.pid in self.processes:
            return
        self.pids.append(process.pid)
        self.processes[process.pid] = process
        self.breakpoints[process.pid] = set(breakpoints)
        self._arm_space(process)
        # gdbserver ptraces what it debugs, its threads too (PTRACE_O_TRACECLONE): the kernel
        # treats it as ptraced (kernel_model/debug/ptrace_links.py) until the user detaches it
        self.debug.ptrace_attach(process)

    def _arm_space(self, process) -> None:
        for address in self.breakpoints.get(process.pid, ()):
            self._arm(process, address)

    def _arm(self, process, address: int) -> None:
        """A code hook at `address`, and at every tool copy of its instruction (a jump probe's
        covered instruction runs in the trampoline: US 6,957,421, breakpoints carried from the
        original block into the instrumented one)."""
        self.debug.add_code_breakpoint(process.space, address, self._on_breakpoint)
        for copy in self.addrmap.copies_of(process, address):
            self.carried[(process.pid, copy)] = address
            self.debug.add_code_breakpoint(process.space, copy, self._on_breakpoint)

    def live_processes(self) -> list:
        return [self.processes[pid] for pid in self.pids if self.debug.is_alive(self.processes[pid])]

    def threads(self) -> list:
        return [t for p in self.live_processes() for t in self.debug.live_threads(p)]

    def thread(self, pid: int, tid: int):
        for thread in self.threads():
            if thread.tid == tid and (pid in (0, -1) or thread.process.pid == pid):
                return thread
        return None

    # ---- breakpoints ---------------------------------------------------------------------------
    def insert_breakpoint(self, address: int, process=None) -> None:
        """A breakpoint at `address` in `process` (every debugged process if None)."""
        for target in [process] if process is not None else self.live_processes():
            self.breakpoints.setdefault(target.pid, set()).add(address)
            self._arm(target, address)

    def remove_breakpoint(self, address: int, process=None) -> None:
        for target in [process] if process is not None else self.live_processes():
            self.breakpoints.get(target.pid, set()).discard(address)
            self._disarm(target, address)

    def _disarm(self, process, address: int) -> None:
        """Take the hook off `process`'s space unless another debugged process sharing it (a
        vfork child and its parent) still wants a stop there."""
        if not self.debug.is_alive(process):
            return
        for other in self.live_processes():
            if other is not process and other.space is process.space \
                    and address in self.breakpoints.get(other.pid, ()):
                return
        self.debug.remove_code_breakpoint(process.space, address)
        for key in [k for k, original in self.carried.items()
                    if k[0] == process.pid and original == address]:
            del self.carried[key]
            self.debug.remove_code_breakpoint(process.space, key[1])

    def _breakpoint_of(self, process, address: int) -> int | None:
        """The breakpoint a hook at `address` stands for: its own, or a carried copy's."""
        if address in self.breakpoints.get(process.pid, ()):
            return address
        return self.carried.get((process.pid, address))

    def _on_breakpoint(self, thread, address: int) -> bool:
        """A code breakpoint is about to run `address` on `thread` (inside Unicorn's hook)."""
        if self.detached or thread is None or self._breakpoint_of(thread.process, address) is None:
            return False                        # a process the user does not debug runs on
        if self._resuming.get(thread.tid) == address:
            del self._resuming[thread.tid]      # the instruction it stopped before: run it
            return False
        if self.stepper.active is thread:
            return False                        # a step in progress ends by its own rule
        self.pending.append(StopEvent(BREAKPOINT, thread=thread,
                                      address=self._breakpoint_of(thread.process, address)))
        return True

    # ---- memory and registers ------------------------------------------------------------
    def read_memory(self, process, address: int, size: int) -> bytes:
        return self.memory.read(process, address, size)

    def write_memory(self, process, address: int, data: bytes) -> None:
        self.memory.write(process, address, data)

    def read_registers(self, thread) -> dict[str, int]:
        return self.registers.read(thread)

    def write_registers(self, thread, changes: dict[str, int]) -> None:
        self.registers.write(thread, changes)

    def pc(self, thread) -> int:
        """The PC as the user sees it (an original address)."""
        return self.addrmap.original_pc(thread.process, self.real_pc(thread))

    def real_pc(self, thread) -> int:
        return self.debug.read_register(thread, self.debug.arch(thread.process).pc)

    # ---- resuming (called from on_stop, which then returns) --------------------------------
    def resume(self, steps=(), signals=None, only=None) -> None:
        """Continue every thread; the threads in `steps` run one original instruction first
        (GDB's vCont;s:T;c: the others wait until the step is done). `signals`: tid -> a
        signal to deliver as the thread resumes (vCont;C). `only`: the threads the user
        resumes when not all: the others stay stopped (holds.py; a vfork parent alone is
        refused: forks.py)."""
        if only is not None:
            self.check_vfork_parents(only)
        self.release_holds()
        if only is not None:
            self.hold_all_but(only)
        held, self._held = self._held, {}
        for tid, signal in (signals or {}).items():
            thread = self.thread(-1, tid)
            if thread is None or not signal:
                continue
            taken = held.get(tid)
            info = taken[1] if taken is not None and taken[0] == signal else None
            self._passing[tid] = signal         # not stopped for again
            self.debug.post_signal(thread, signal, info)
        for thread in self.threads():
            # A stop in a relocated copy is at an alias of the original address (the door's
            # kernel_model/debug/code_aliases.py): that breakpoint is the one it resumes from.
            pc = self.debug.code_alias_original(thread.process.space, self.real_pc(thread))
            if self._breakpoint_of(thread.process, pc) is not None:
                self._resuming[thread.tid] = pc
        if steps:
            self.stepper.start(steps[0])

    def kill(self) -> None:
        """Every debugged process dies by SIGKILL (GDB's kill)."""
        for process in self.live_processes():
            self.debug.kill_process(process, 9)
        self.detach()

    def detach(self) -> None:
        """Remove every breakpoint and let the program run on untouched (GDB's detach): the
        probes stay, as they were before the debugger came."""
        for process in self.live_processes():
            for address in list(self.breakpoints.get(process.pid, ())):
                self.remove_breakpoint(address, process)
            for watch in list(self.watchpoints.get(process.pid, ())):
                self.remove_watchpoint(*watch, process)
            self.debug.ptrace_detach(process)
        self.detached = True
        self.release_holds()
        self.stepper.cancel()
        self.debug.set_run_controller(None)

    def interrupt(self) -> None:
        """Stop the running guest as soon as possible (from another host thread: Ctrl-C).
        While the world is stopped there is nothing to interrupt: GDB's 0x03 then means
        nothing, and a request left behind would stop the next resume at once."""
        if self.stopped:
            return
        self.interrupt_requested = True
        self.debug.interrupt_guest()

    # ---- the run controller (kernel_model/debug/run.py) -----------------------------------
    def schedule_point(self) -> None:
        if self.interrupt_requested and not self.stepper.active:
            self.interrupt_requested = False
            thread = self._interrupted_thread()
            if thread is not None:
                self.stepper.settle(thread, StopEvent(INTERRUPT, thread=thread, signal=SIGINT))
        while self.pending and not self.detached and not self.stepper.active:
            event = self.pending.pop(0)
            if event.kind != EXITED and (event.thread is None or not self.debug.is_alive_thread(event.thread)):
                continue
            self._resuming.clear()
            self.last_stop = event
            self.stopped = True
            try:
                self.on_stop(event)
            finally:
                self.stopped = False

    def _interrupted_thread(self):
        current = self.debug.current_thread()
        if current is not None and current.process.pid in self.processes \
                and self.debug.is_alive_thread(current):
            return current
        threads = self.threads()
        return threads[0] if threads else None

    def intercept_signal(self, thread) -> bool:
        """ptrace's signal-delivery-stop: a debugged thread is about to get a signal; unless
        the user passes it without stopping (QPassSignals), it is taken out and reported, and
        delivered only if the user resumes with it (GDB's `signal SIG`, or `continue` after a
        signal GDB passes: vCont;C)."""
        if self.detached or thread.process.pid not in self.processes:
            return False
        signal = self.debug.next_signal(thread)
        if self._passing.get(thread.tid) == signal:
            del self._passing[thread.tid]
            return False
        if signal in (0, 9) or signal in self.pass_signals:      # SIGKILL is never stopped
            return False
        self._held[thread.tid] = self.debug.take_signal(thread)
        self.pending.append(StopEvent(SIGNAL, thread=thread, signal=signal))
        return True

    def choose(self, thread):
        return self.stepper.choose(thread)

    def slice_count(self, thread, count: int) -> int:
        return self.stepper.slice_count(thread, count)

    def after_slice(self, thread, exit_) -> None:
        self.stepper.after_slice(thread)
        self.settle_watch_hit(thread)

    # ---- process events (kernel_model/debug/) --------------------------------------------
    def exit(self, process, status: int) -> None:
        if process.pid in self.processes and not self.detached:
            self.stepper.process_ended(process)
            self.pending.append(StopEvent(EXITED, process=process, status=status))
