"""emu/host_stop.py: a host request ends a guest run wherever it is, even a loop that never
leaves Unicorn, and every later run at once, until cleared."""
import signal
import threading
import time

import pytest

from emu import host_stop
from emu.host_stop import StopRequested

from .guest import ARCHES, CODE, machine_with


@pytest.fixture(autouse=True)
def no_request_left():
    host_stop.clear()
    yield
    host_stop.clear()


def _request_when_running(machine, signum: int) -> threading.Thread:
    """Another host thread (as the CLI's signal watcher): asks once a Machine is in emu_start,
    and again until the request is taken (a stop asked just before emu_start is lost). A run
    that never says it is in emu_start is stopped by hand after 10 s: the test then fails
    instead of hanging."""
    def ask():
        deadline = time.monotonic() + 10
        while not host_stop._running:
            if time.monotonic() > deadline:
                machine.stop()
                return
            threading.Event().wait(0.001)
        host_stop.request(signum)
        while not host_stop.taken():
            threading.Event().wait(0.01)
            host_stop.stop_running()
    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("arch", ARCHES)
def test_a_request_from_another_thread_ends_an_endless_loop(arch):
    m = machine_with(arch, "spin: jmp spin")              # no event ever ends this run by itself
    asker = _request_when_running(m, signal.SIGINT)
    with pytest.raises(StopRequested) as stopped:
        m.run(CODE)
    asker.join(timeout=30)
    assert stopped.value.signal == signal.SIGINT and host_stop.taken()
    assert m.pc == CODE                          # at an instruction boundary of the loop
    assert not host_stop._running


@pytest.mark.parametrize("arch", ARCHES)
def test_a_pending_request_ends_every_later_run_before_it_starts(arch):
    m = machine_with(arch, "inc eax; spin: jmp spin")
    host_stop.request(signal.SIGTERM)
    with pytest.raises(StopRequested) as stopped:
        m.run(CODE, count=1)
    assert stopped.value.signal == signal.SIGTERM
    assert m.reg("eax") == 0                     # not one instruction ran
    host_stop.clear()
    m.run(CODE, count=1)
    assert m.reg("eax") == 1


def test_the_first_request_is_the_one_kept():
    host_stop.request(signal.SIGPIPE)
    host_stop.request(signal.SIGINT)
    assert host_stop.pending() == signal.SIGPIPE


def test_a_request_in_a_blocking_host_call_raises_out_of_it():
    """The main thread's own request (its signal handler) inside blocking(): StopRequested at
    once; outside, only remembered (the run ends at its next slice boundary)."""
    host_stop.request(signal.SIGINT)             # outside: no exception
    host_stop.clear()
    with pytest.raises(StopRequested):
        with host_stop.blocking():
            host_stop.request(signal.SIGINT)
    with pytest.raises(StopRequested):           # and a blocking call begun after it
        with host_stop.blocking():
            pass
