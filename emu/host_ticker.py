"""A host clock that interrupts guest runs: a tick every `period` seconds of the process's CPU
time, as perf's cpu-clock event samples a task (a software timer on the task's CPU time,
kernel/events/core.c cpu_clock_event_*). Not deterministic: when a tick lands depends on the
host, so the same run takes different samples.

A thread blocked in uc_emu_start runs no Python (host_stop.py), so the clock is a host thread:
it sleeps until the process has used `period` more CPU seconds, marks a tick due and asks
Unicorn to leave the run in progress (uc_emu_stop, documented as callable from another thread;
it sets the CPU's exit request, checked at every translated block). The run loop takes the due
tick (`take()`) when the run returns, delivers it and runs on. A stop asked just before the run
began is cleared by uc_emu_start (uc.c: `uc->stop_request = false`), so while a tick is due and
not taken the thread asks again after a short wait.

Between runs (the kernel handling a system call) no guest instruction runs: a tick due then is
taken at the next run's start, as the timer's other ticks are delivered "before the next
instruction".
"""
from __future__ import annotations

import threading
import time

RETRY_S = 0.0005          # a due tick not taken yet: stop the run again after this long
MIN_WAIT_S = 0.0001


class HostTicker:
    def __init__(self, period_s: float):
        if period_s <= 0:
            raise ValueError(f"host clock period must be positive, not {period_s}")
        self.period = period_s
        self.fired = 0                    # ticks raised (taken or not)
        self._due = False
        self._machine = None              # the Machine inside emu_start, or None
        self._closed = threading.Event()
        self._start_cpu = time.process_time()
        self._thread = threading.Thread(target=self._loop, name="trapline-host-clock", daemon=True)
        self._thread.start()

    # ---- the run loop's side -----------------------------------------------------------------
    def running(self, machine) -> None:
        """`machine` goes into emu_start: a tick from now on stops it."""
        self._machine = machine

    def idle(self) -> None:
        self._machine = None

    def take(self) -> bool:
        """Whether a tick is due (and it is taken: the caller delivers it)."""
        if not self._due:
            return False
        self._due = False
        return True

    def elapsed_ns(self) -> int:
        """CPU time of the process since the clock started, in nanoseconds (a sample's time)."""
        return int((time.process_time() - self._start_cpu) * 1e9)

    def close(self) -> None:
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    # ---- the clock's thread ------------------------------------------------------------------
    def _loop(self) -> None:
        last = time.process_time()
        wait = self.period
        while not self._closed.wait(wait):
            if self._due:                          # not taken yet: the run may have missed it
                self._stop_running()
                wait = RETRY_S
                continue
            used = time.process_time() - last
            if used < self.period:
                wait = max(self.period - used, MIN_WAIT_S)
                continue
            last += used
            self.fired += 1
            self._due = True
            self._stop_running()
            wait = self.period

    def _stop_running(self) -> None:
        machine = self._machine
        if machine is not None:
            machine.stop()
