"""The profiling timer: an interrupt every N guest instructions, through the IDT's timer vector.

US 7,823,129 samples "on a timer interrupt or a programmed performance monitor event": the
interrupted thread's trap frame (EIP/RIP, and EBP/RBP for the frame-pointer walk) goes to the
profiler's kernel handler. Here time is virtual: the timer counts executed guest instructions
(so the same run takes the same samples.

How the interrupt is raised: the Machine's instruction budget is the timer's count-down
register (what the local APIC's current-count register is to a real CPU, Intel SDM Vol. 3A
10.5.4): the kernel gives a run at most the instructions left until the next tick, and a run
that ends by its budget with the tick due has reached it. The kernel then delivers the
interrupt at that instruction boundary as the CPU delivers an external interrupt (SDM 6.12.1):
through the gate of TIMER_VECTOR (0x20, where Linux's legacy PIT IRQ 0 lands), with a hardware
trap frame on the thread's kernel stack, the handler, and IRET.

A timer armed with a capture (timer_capture.py: a sampling tool's wish) lets a C handler take
the instruction ticks where the block clock fires, without stopping the run: what the ticks'
records hold reaches the handler as CapturedFrame before the kernel does anything else (at its
next entry or the run's end). A tick the C handler cannot take stops the run as above. With a
histogram (PC mode), the handler counts ticks per PC, and the counts go to `on_tallies` as
TickTally at the same points, one a distinct PC.

`event="syscalls"` counts system calls instead (US 7,823,129's "other types of periodic events"):
every N-th call's return to user mode is interrupted, so the sample's PC is the instruction
after the call. The timer is then a syscall watcher of the debug interface; it stops the run at
the call's return and delivers the tick before the next instruction.

`event="branches"` counts taken branches (a performance monitor's BR_INST_RETIRED.NEAR_TAKEN,
in virtual time): a translation-block hook on each Machine the timer runs counts block entries
that do not continue where the last block ended (emu/branch_counter.py) and stops the run at the
N-th, at a block boundary. `event="faults"` counts page faults (#PF from user code): every N-th
is delivered at the faulting instruction, before the kernel turns the fault into its signal.

The timer does not perturb the guest: a slice the timer cut short is resumed at once for the
thread that ran it, with the rest of its quantum, without a scheduling decision, a signal check
or a clock step in between — the tick is invisible to the program except through what a tool's
handler does. A tick that falls due on a run that ended otherwise (a system call taken outside
Unicorn's hooks, a fault, an exit) is delivered before the next instruction the CPU runs.

`event="host"` ticks on the host's clock instead, every `interval` microseconds of the process's
CPU time (perf's cpu-clock, emu/host_ticker.py): the slice runs with no count, a host thread
marks a tick due and a C block hook stops the run at the next block's start (emu/host_clock.py,
whose thread never takes the GIL; where C cannot be built, a Python thread stops the run itself).
Not deterministic: the same run takes different samples; a sample's time is the host CPU time
(ns) since arming.
"""
from emu import exits
from emu import block_clock
from emu.block_clock import clock_of
from emu.branch_counter import BranchCounter
from emu import host_clock
from emu.host_ticker import HostTicker

from ..errors import KernelError
from .collector_pause import collector_paused
from .timer_capture import CapturedFrame, TickTally

TIMER_VECTOR = 0x20
EVENTS = ("insns", "syscalls", "branches", "faults", "host")


def _host_clock(period_s: float):
    """The host clock's thread in C (emu/host_clock.py), or in Python where C cannot be built."""
    return host_clock.start(period_s) or HostTicker(period_s)


class SamplingTimer:
    """Counts the events of one run (all its processes and threads: one CPU) and interrupts
    every `interval` of them; `on_tick(thread, frame)` is the handler the gate leads to,
    `on_ticks(thread, frames)` takes the ticks a capture took, and `on_tallies(thread,
    tallies)` those a capture's histogram counted."""

    def __init__(self, kernel, interval: int, on_tick, event: str = "insns", on_switch=None,
                 capture=None, on_ticks=None, on_tallies=None):
        if interval <= 0:
            raise KernelError(f"timer interval must be positive, not {interval}")
        if event not in EVENTS:
            raise KernelError(f"timer event {event!r}: expected one of {', '.join(EVENTS)}")
        self.kernel = kernel
        self.interval = interval
        self.event = event
        self.on_tick = on_tick
        self.on_ticks = on_ticks if on_ticks is not None else \
            (lambda thread, frames: self.each_tick(thread, frames, on_tick))
        self.on_tallies = on_tallies
        self.on_switch = on_switch    # on_switch(previous, thread): a slice of another thread
        self._last_thread = None
        self.left = interval          # events until the next tick
        self.pending = False          # a tick fell due where it could not be delivered yet
        self.ticks = 0
        self.slice_insns = 0          # instructions of the last slice run() ran (all pieces)
        self.at_block = False         # the slice's quantum ends at a block boundary (run())
        self.elapsed = 0              # instructions counted since the timer was armed
        self._stopped = False         # a system call's tick stopped the run (syscall_exit)
        self._branches: dict[int, BranchCounter] = {}     # space serial -> its Machine's counter
        # The tick's first half in C (timer_capture.py), on the block clock's runs; None: every
        # tick goes through the IDT.
        self.capture = capture
        self.host = _host_clock(interval / 1e6) if event == "host" else None

    def close(self) -> None:
        """The timer is disarmed: the host clock's thread ends."""
        if self.host is not None:
            self.host.close()

    # ---- instruction ticks: the run loop's slice, cut into pieces at the ticks -------------
    def run(self, thread, machine, count: int, at_block: bool = False):
        """Run `thread` for a slice of `count` instructions (0: unlimited) as the run loop
        would, interrupting it at every tick on the way; the exit is the slice's. `at_block`:
        the count is a quantum that ends at a block boundary, as Machine.run(at_block=True)
        ends it without the timer (emu/quantum_clock.py: the same boundary, the same charge)."""
        self.slice_insns = 0
        self.at_block = at_block and count > 0
        if thread is not self._last_thread:
            previous, self._last_thread = self._last_thread, thread
            if self.on_switch is not None:
                self.on_switch(previous, thread)
        if self.host is not None:
            return self._run_host_clocked(thread, machine, count)
        while True:
            self._deliver_pending(thread)
            clock = self._block_clock(machine) if not count or self.at_block else None
            if clock is not None:
                exit_, ran = self._run_block_clocked(thread, machine, clock,
                                                     count - self.slice_insns if count else 0)
            else:
                exit_, ran = self._run_counted(thread, machine, count)
            self.slice_insns += ran
            self.elapsed += ran
            if self.event == "insns":
                # (the clock's deadline moved on past the ticks its C handler took; a quantum's
                # pieces take none)
                self.left = clock.left if clock is not None and not count else self.left - ran
                if self.left <= 0:
                    # the next tick is due at the next multiple of the interval
                    self.left = self.left % self.interval or self.interval
                    self.pending = True
                if clock is not None and (clock.fired or clock.paused) \
                        and exit_.kind == exits.STOPPED and not self._stopped:
                    if not self.kernel.may_continue(thread) or thread.deferred:
                        return exit_
                    exit_ = exits.Exit(exits.BUDGET, machine.pc)    # the clock's stop: go on
            elif self._branch_stop(thread, exit_):
                if not self.kernel.may_continue(thread) or thread.deferred:
                    return exit_
                exit_ = exits.Exit(exits.BUDGET, machine.pc)      # the count's stop: go on
            elif self.event == "faults" and exit_.kind == exits.FAULT:
                self._fault(thread)
                return exit_
            if exit_.kind == exits.STOPPED and self._stopped:
                self._stopped = False               # stopped for a system call's tick
                if not self.kernel.may_continue(thread) or thread.deferred:
                    return exit_
                self._deliver_pending(thread)
                continue
            if exit_.kind != exits.BUDGET:
                return exit_
            self._deliver_pending(thread)
            if self.kernel.debug.instruction_alarms.due():
                # The tick's handler asked for a safe point (a profiler placing or removing
                # hooks, debug/alarms.py): the run loop fires alarms between slices.
                return exits.Exit(exits.STOPPED, machine.pc)
            if count and self.slice_insns >= count:
                return exit_                         # the quantum's end: the scheduler's turn
            if not self.kernel.may_continue(thread):
                return exits.Exit(exits.STOPPED, machine.pc)

    def _run_host_clocked(self, thread, machine, count: int):
        """The slice at full speed (a budget only for a quantum), stopped by the host clock at
        its ticks: each tick is delivered where the run stopped and the slice goes on. With a
        capture, the C handler takes the tick there (the walk from the registers as the stop
        left them: no trap through the IDT, no walk in Python), and its records reach the tool
        at the next entry into the kernel and at the slice's end, as the block clock's do."""
        capture = self.capture.of(thread.process.space) if self.capture is not None else None
        if capture is None:
            return self._host_slice(thread, machine, count, None)
        machine.on_kernel_entry = lambda: self._deliver_host_captured(thread, capture)
        try:
            return self._host_slice(thread, machine, count, capture)
        finally:
            machine.on_kernel_entry = None
            self._deliver_host_captured(thread, capture)

    def _host_slice(self, thread, machine, count: int, capture):
        host = self.host
        while True:
            if host.take():
                self.pending = True
            self._deliver_host_pending(thread, capture)
            host.running(machine)
            try:
                exit_ = machine.run(machine.pc, count=count - self.slice_insns if count else 0,
                                    at_block=self.at_block)
            finally:
                host.idle()
            self.slice_insns += machine.last_run_insns
            if not host.take():
                return exit_
            self.pending = True
            if exit_.kind not in (exits.STOPPED, exits.BUDGET) or thread.deferred \
                    or not self.kernel.may_continue(thread):
                return exit_                # the tick waits for the next instruction run
            if capture is not None:
                self._take_host_tick(thread, machine, capture)
            if count and self.slice_insns >= count:
                self._deliver_host_pending(thread, capture)
                return exit_

    def _take_host_tick(self, thread, machine, capture) -> None:
        """The due host tick, taken by the C handler where the run stopped; one it declines
        stays pending for the IDT, after the records before it (their order is the ticks')."""
        ts = self.host.elapsed_ns()
        taken = capture.take_stopped(machine, machine.pc, ts)
        if not taken and capture.declined == "buffer full":
            self._deliver_host_captured(thread, capture)
            taken = capture.take_stopped(machine, machine.pc, ts)
        if taken:
            self.pending = False
        if taken != 1:              # 2: the tool's batch is full; 0: the IDT's turn
            self._deliver_host_captured(thread, capture)

    def _deliver_host_pending(self, thread, capture) -> None:
        if self.pending and capture is not None:
            self._deliver_host_captured(thread, capture)
        self._deliver_pending(thread)

    def _deliver_host_captured(self, thread, capture) -> None:
        """The host ticks the capture took, as one batch (each frame's `ts`: the host CPU
        time of its tick, in ns)."""
        with collector_paused():
            self._hand_over_all(thread, capture, 0)

    def _run_counted(self, thread, machine, count: int):
        """One piece with Unicorn's exact count (the budget stops at the tick's instruction)."""
        piece = self._clip(count - self.slice_insns if count else 0)
        branches = self._branch_counter(thread) if self.event == "branches" else None
        if branches is not None:
            branches.begin_run(self.left)
        exit_ = machine.run(machine.pc, count=piece,
                            at_block=self.at_block and self.event != "insns")
        return exit_, machine.last_run_insns

    def _run_block_clocked(self, thread, machine, clock, quantum: int):
        """One piece of a slice on the block clock: no per-instruction hook; the run stops at
        the first block boundary at or after the tick (block_clock.py), unless the capture
        takes the tick there; its records are delivered at every entry into the kernel and at
        the run's end. `quantum`: the instructions left to the slice's quantum (0: none), which
        stops the piece too: the C handler, which moves the deadline on past the ticks it takes,
        is left out (those ticks go through the IDT)."""
        before, base = clock.executed, self.elapsed
        capture = None if self.capture is None or quantum else \
            self.capture.of(thread.process.space)
        if capture is not None:
            clock.attach_capture(capture, self.interval)
            machine.on_kernel_entry = lambda: self._deliver_captured(thread, capture, base, before)
        clock.begin_run(min(self.left, quantum) if quantum else self.left)
        try:
            exit_ = machine.run(machine.pc)
        finally:
            clock.end_run()
            if capture is not None:
                machine.on_kernel_entry = None
                clock.detach_capture()
        if capture is not None:
            self._deliver_captured(thread, capture, base, before)
        return exit_, clock.executed - before

    def _deliver_captured(self, thread, capture, base: int, before: int) -> None:
        """The ticks the capture took, as one batch, each frame with its own virtual time
        (`ts`, what timer_instructions read at that tick): on_ticks(thread, frames)."""
        with collector_paused():
            if not self._hand_over_all(thread, capture, base - before):
                return
        self.elapsed = base

    def _hand_over_all(self, thread, capture, at: int) -> bool:
        """What the capture took since it was drained last, each tick at `at` + its count: its
        histogram's tallies, then its records (ticks whose PC found no room in the histogram:
        other PCs); False when it took nothing."""
        tallies = capture.drain_tallies() if capture.histogram else None
        records = capture.drain()
        if tallies:
            make = tuple.__new__
            self.ticks += sum(tally.count for tally in tallies)
            self.on_tallies(thread, [make(TickTally, (pc, count, at + first)) for pc, count, first in tallies])
        if records:
            self._hand_over(thread, records, at)
        return bool(tallies or records)

    def _hand_over(self, thread, records, at: int) -> None:
        """The capture's records to the tool as CapturedFrames, each at `at` + its count."""
        vector, stack, make = TIMER_VECTOR, self.capture.mode == "stack", tuple.__new__
        # (tuple.__new__: the NamedTuple without its Python __new__, thousands of times a batch)
        frames = [make(CapturedFrame, (vector, frames[0], sp, frames if stack else None, at + executed,
                                       shared))
                  for executed, sp, frames, shared in records]
        self.ticks += len(frames)
        self.on_ticks(thread, frames)

    def each_tick(self, thread, frames, on_tick) -> None:
        """Captured ticks one by one to `on_tick`, each while timer_instructions reads its time."""
        for frame in frames:
            self.elapsed = frame.ts
            on_tick(thread, frame)

    def _block_clock(self, machine):
        """The block clock of `machine` when the instruction timer may use it: a slice on a
        Machine that does not count every instruction already (a tool that counts pays
        Unicorn's exact count anyway, and then the ticks stay exact), or a quantum that ends at
        a block boundary (its ticks too: a tick inside a block would begin the rest of that
        block as a block of its own, which the quantum's count would count twice)."""
        if self.event != "insns" or not block_clock.available() \
                or (machine.icount is not None and not self.at_block):
            return None
        return clock_of(machine)

    def _branch_stop(self, thread, exit_) -> bool:
        if self.event != "branches" or not self._branches_ran(self._branch_counter(thread)):
            return False
        return exit_.kind == exits.STOPPED and not self._stopped

    def _clip(self, count: int) -> int:
        if self.event != "insns":
            return count
        return min(count, self.left) if count else self.left

    # ---- taken-branch and page-fault ticks ---------------------------------------------------
    def _branch_counter(self, thread) -> BranchCounter:
        """The taken-branch counter of `thread`'s Machine (one per address space), made when
        that Machine first runs under this timer."""
        space = thread.process.space
        counter = self._branches.get(space.serial)
        if counter is None:
            counter = self._branches[space.serial] = BranchCounter(space.machine)
        return counter

    def _branches_ran(self, counter: BranchCounter) -> bool:
        """Take the run's taken branches off the count; True when they reached the tick."""
        if not counter.fired:
            self.left = counter.left
            return False
        self.left = self.interval
        self.pending = True
        return True

    def _fault(self, thread) -> None:
        """A page fault ended the run: every `interval`-th one is a tick, delivered at the
        faulting instruction before the kernel handles the fault (its trap frame is the
        fault's: the sample's PC is the instruction that faulted)."""
        self.left -= 1
        if self.left <= 0:
            self.left = self.interval
            self.pending = True
            self._deliver_pending(thread)

    # ---- system-call ticks (a syscall watcher of the debug interface) -----------------------
    def syscall_entry(self, thread, name, args) -> None:
        pass

    def syscall_exit(self, thread, name, args, result) -> None:
        """Every `interval`-th call ends with a tick, delivered once it has returned."""
        self.left -= 1
        if self.left <= 0:
            self.left = self.interval
            self.pending = self._stopped = True
            thread.process.machine.stop()

    # ---- delivery --------------------------------------------------------------------------
    def _deliver_pending(self, thread) -> None:
        if not self.pending or self.kernel.current is not thread:
            return
        self.pending = False
        self.ticks += 1
        space = thread.process.space
        if space.idt.handler_for(TIMER_VECTOR) is None:
            space.idt.set_gate(TIMER_VECTOR, self._gate_handler)      # DPL 0: `int $0x20` is #GP
        space.traps.dispatch(TIMER_VECTOR, space.machine.pc, software=False)

    def _gate_handler(self, frame) -> bool:
        return self.on_tick(self.kernel.current, frame)
