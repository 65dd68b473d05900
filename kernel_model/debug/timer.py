"""The profiling timer as the debug interface offers it (what perf_event_open's sampling events
are to a real profiler): a tool arms an interrupt every N guest instructions (or system calls,
taken branches, page faults: time/timer.py) and is told of every tick, with the interrupted thread and its trap frame. Part of the debug interface
(kernel_model/debug/); the timer itself is kernel_model/time/timer.py.

Event, delivered to every subscriber with a method of that name:
  timer_tick(thread, frame)   the timer interrupted `thread` (its registers are live: the
                              door's `cpu(process)` reads EBP/RBP); `frame` is the hardware trap
                              frame the interrupt pushed (frame.ip is the interrupted EIP/RIP,
                              frame.sp its stack pointer).
                              With a capture (arm_timer's `capture`), most ticks were taken
                              by the C handler at the interrupt and come later, before the
                              kernel does anything else: `frame` is then a CapturedFrame (ip,
                              sp, and `stack`: the PC and return addresses, in stack mode)
                              and the registers are no longer the tick's.
  timer_tick_batch(thread, frames)   the ticks the capture took since the last delivery, all
                              CapturedFrames of `thread`, in order, each with its time (`ts`):
                              a subscriber that has it hears no timer_tick for them.
  timer_tick_tally(thread, tallies)   with arm_timer's `histogram` (PC mode): the ticks the
                              capture counted per PC since the last delivery, TickTally (ip,
                              count, ts of the first), in the order of their first ticks; the
                              subscribers without it do not hear these ticks (a tool that
                              needs each tick arms no histogram).
  thread_switch(previous, thread)   the CPU goes on with `thread` after `previous` (None: the
                              first slice since the timer was armed); heard while the timer is
                              armed, as perf's context-switch records come with a sampling event.
"""
import importlib

__all__ = ["TimerAccess", "CALLEE_SAVED", "CAPTURES", "WALK_REGISTERS", "CapturedFrame", "TickTally"]

# The timer and its C capture (time/timer.py, time/timer_capture.py, and through them the block
# clock and the tick capture of emu/) are imported when a tool arms the timer or names their
# vocabulary, not by every run (issue 31, start-up): a plain run arms no timer.
_CAPTURE_NAMES = frozenset({"CALLEE_SAVED", "CAPTURES", "WALK_REGISTERS", "CapturedFrame", "TickTally"})


def __getattr__(name: str):
    if name in _CAPTURE_NAMES:
        return getattr(importlib.import_module("..time.timer_capture", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TimerAccess:
    def __init__(self, kernel, events):
        self._kernel = kernel
        self._events = events               # events.py: who hears the ticks

    def arm_timer(self, interval: int, *, event: str = "insns", capture: str | None = None,
                  batch: int | None = None, histogram: bool = False) -> None:
        """Interrupt every `interval` guest instructions (event "insns"), system calls
        ("syscalls"), taken branches ("branches") or page faults ("faults") from now on (one
        timer for the run: arming again restarts it); or every `interval` microseconds of the
        host process's CPU time (event "host": perf's cpu-clock, not deterministic).

        `capture` ("pc" or "stack", instruction and host ticks): let the C handler take the ticks
        it can (time/timer_capture.py), teaching it stack rules with `timer_learn`; `batch`: hand
        its records over at the latest when that many wait (None: when its buffer fills);
        `histogram` (capture "pc"): count the ticks per PC instead of a record each, heard as
        timer_tick_tally (a tool that only counts samples per PC: no tick's own time)."""
        from ..time.timer import SamplingTimer
        from ..time.timer_capture import TimerCapture, available

        self.disarm_timer()
        native = None
        if capture is not None and event in ("insns", "host") and available():
            native = TimerCapture(capture, batch, histogram=histogram and capture == "pc")
        timer = self._kernel.timer = SamplingTimer(self._kernel, interval, self._timer_tick, event,
                                                   on_switch=self._timer_switch, capture=native,
                                                   on_ticks=self._timer_ticks_taken,
                                                   on_tallies=self._timer_ticks_tallied)
        if event == "syscalls":
            self._events.add_syscall_watcher(timer)

    def disarm_timer(self) -> None:
        timer, self._kernel.timer = self._kernel.timer, None
        if timer is not None:
            self._events.remove_syscall_watcher(timer)
            timer.close()

    def timer_capturing(self) -> bool:
        """Whether ticks are taken by the C handler (a capture was asked for and can be built)."""
        timer = self._kernel.timer
        return timer is not None and timer.capture is not None

    def timer_learn(self, process, lookup: int, rule: tuple) -> None:
        """Teach the C handler of `process`'s address space how to step a stack walk past the
        frame looked up at `lookup` (timer_capture.TimerCapture.learn has the rule's form)."""
        timer = self._kernel.timer
        if timer is not None and timer.capture is not None:
            timer.capture.learn(process.space, lookup, rule)

    def forget_timer_rules(self, process) -> None:
        """An object was mapped or unmapped in `process`: the rules may describe what is gone."""
        timer = self._kernel.timer
        if timer is not None and timer.capture is not None:
            timer.capture.forget(process.space)

    def timer_ticks(self) -> int:
        """Ticks delivered since the timer was armed (0 when it is not)."""
        timer = self._kernel.timer
        return timer.ticks if timer is not None else 0

    def timer_instructions(self) -> int:
        """Guest instructions the timer has counted since it was armed (all processes): at a
        tick, the tick's virtual time. A multiple of the interval when ticks are exact; at the
        block boundary the tick was delivered on otherwise (emu/block_clock.py)."""
        timer = self._kernel.timer
        return timer.elapsed if timer is not None else 0

    def timer_host_ns(self) -> int:
        """The host CPU time (ns) since a host-clock timer was armed (event "host"): at a tick,
        the tick's time; 0 for the other timers."""
        timer = self._kernel.timer
        return timer.host.elapsed_ns() if timer is not None and timer.host is not None else 0

    def virtual_time_ns(self) -> int:
        """The run's virtual time in nanoseconds since it started, exact inside a hook: the
        guest's clock (CLOCK_MONOTONIC less its boot offset, kernel_model/time/clock.py) plus the
        instructions it has not charged (kernel_model/time/cpu_time.py), one nanosecond each, in
        processes whose instructions are counted."""
        return self._kernel.cpu_time.virtual_time_ns()

    def thread_instructions(self, thread) -> int:
        """The instructions `thread` ran itself (a task clock: not its process's other
        threads'), exact inside a hook; 0 unless its process is counted (count_instructions)."""
        kernel = self._kernel
        return kernel.cpu_time.thread_instructions(thread, kernel.in_hook and thread is kernel.current)

    def _timer_switch(self, previous, thread) -> None:
        self._events.emit("thread_switch", previous, thread)

    def _timer_tick(self, thread, frame) -> bool:
        self._events.emit("timer_tick", thread, frame)
        return True

    def _timer_ticks_taken(self, thread, frames) -> None:
        """The capture's ticks: to a subscriber with `timer_tick_batch` all at once (in tick
        order, as a perf ring buffer is read), to the others one by one."""
        timer = self._kernel.timer
        for subscriber in self._events.subscribers:
            batch = getattr(subscriber, "timer_tick_batch", None)
            if batch is not None:
                batch(thread, frames)
            elif getattr(subscriber, "timer_tick", None) is not None:
                timer.each_tick(thread, frames, subscriber.timer_tick)

    def _timer_ticks_tallied(self, thread, tallies) -> None:
        for subscriber in self._events.subscribers:
            tally = getattr(subscriber, "timer_tick_tally", None)
            if tally is not None:
                tally(thread, tallies)
