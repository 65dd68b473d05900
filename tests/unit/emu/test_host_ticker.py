"""emu/host_ticker.py: the host clock marks a tick due after `period` of the process's CPU
time and stops the Machine inside emu_start, asking again while the tick is not taken (a stop
asked just before a run begins is lost); `take()` hands each due tick over once."""
import threading
import time

from emu.host_ticker import HostTicker


class _Machine:
    def __init__(self):
        self.stops = 0
        self.stopped = threading.Event()

    def stop(self):
        self.stops += 1
        if self.stops >= 2:
            self.stopped.set()


def _burn_until(done, limit_s: float = 60.0) -> None:
    """Use CPU (the clock counts the process's CPU time) until done() or the limit."""
    end = time.monotonic() + limit_s
    while not done() and time.monotonic() < end:
        sum(range(1000))


def test_a_due_tick_stops_the_running_machine_again_until_taken():
    ticker = HostTicker(0.001)
    machine = _Machine()
    try:
        ticker.running(machine)
        _burn_until(machine.stopped.is_set)
        ticker.idle()
        assert machine.stops >= 2 and ticker.fired >= 1     # asked again: the tick was not taken
        assert ticker.take() is True and ticker.take() is False
    finally:
        ticker.close()


def test_a_tick_due_between_runs_waits_to_be_taken_and_the_thread_ends_on_close():
    ticker = HostTicker(0.001)
    try:
        _burn_until(lambda: ticker.fired >= 1)              # no Machine runs: nothing to stop
        assert ticker.fired >= 1 and ticker.take() is True
    finally:
        ticker.close()
    assert not ticker._thread.is_alive()
