"""A host clock that interrupts guest runs: a tick every `period` seconds of the process's CPU
time, as perf's cpu-clock event samples a task (a software timer on the task's CPU time,
kernel/events/core.c cpu_clock_event_*). Not deterministic: when a tick lands depends on the
host, so the same run takes different samples.

A thread blocked in uc_emu_start runs no Python (host_stop.py), so the clock is a host thread:
it sleeps until the process has used `period` more CPU seconds and marks a tick due; the run in
progress stops at the next block it begins (emu/block_stop.py: a hook on each Machine the clock
runs, `running`), and the run loop takes the due tick (`take()`) when the run returns, delivers
it and runs on. The thread does not stop the run itself (uc_emu_stop): Unicorn may then leave
just after the store of a read-modify-write instruction and run it again when the run resumes
(native/block_stop.c). A stop asked between runs stops the next run at its first block.

This is the clock where C cannot be built (emu/host_clock.py is the one in C), so the block hook
is the Python one there: every block pays a Python call while the clock runs, which such a host
pays rather than a guest that runs an instruction twice.

Between runs (the kernel handling a system call) no guest instruction runs: a tick due then is
taken at the next run's start, as the timer's other ticks are delivered "before the next
instruction".
"""
from __future__ import annotations

import threading
import time

from .block_stop import BlockStop

MIN_WAIT_S = 0.0001


class HostTicker:
    def __init__(self, period_s: float):
        if period_s <= 0:
            raise ValueError(f"host clock period must be positive, not {period_s}")
        self.period = period_s
        self.fired = 0                    # ticks raised (taken or not)
        self._due = False
        self._stops = BlockStop()         # ends the run at a block's start (module docstring)
        # a stop is asked only while a tick is due: the tick and its stop change together
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._start_cpu = time.process_time()
        self._thread = threading.Thread(target=self._loop, name="trapline-host-clock", daemon=True)
        self._thread.start()

    # ---- the run loop's side -----------------------------------------------------------------
    def running(self, machine) -> None:
        """`machine` goes into emu_start: a tick from now on stops it (its block hook, added at
        its first run)."""
        self._stops.arm(machine)

    def idle(self) -> None:
        """(The block hooks stay: a Machine that does not run begins no block.)"""

    def take(self) -> bool:
        """Whether a tick is due (and it is taken: the caller delivers it; its stop, if no run
        took it, is withdrawn)."""
        if not self._due:
            return False
        with self._lock:
            self._due = False
            self._stops.withdraw()
        return True

    def elapsed_ns(self) -> int:
        """CPU time of the process since the clock started, in nanoseconds (a sample's time)."""
        return int((time.process_time() - self._start_cpu) * 1e9)

    def close(self) -> None:
        """The thread ends, and the block hooks go (on the thread that runs the Machines)."""
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        self._stops.close()

    # ---- the clock's thread ------------------------------------------------------------------
    def _loop(self) -> None:
        last = time.process_time()
        wait = self.period
        while not self._closed.wait(wait):
            if self._due:                          # not taken yet: no other until it is
                wait = self.period
                continue
            used = time.process_time() - last
            if used < self.period:
                wait = max(self.period - used, MIN_WAIT_S)
                continue
            last += used
            self.fired += 1
            with self._lock:
                self._due = True
                self._stops.ask()                  # the next block any Machine begins stops
            wait = self.period
