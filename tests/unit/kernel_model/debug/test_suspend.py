"""Holding threads through the debug interface (kernel_model/debug/suspend.py): a held thread is
never scheduled, keeps its wakeups, runs again when every hold is released; the slice still
ends on time while a runnable thread is held; the deadlock report names the hold."""
import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernel_model.errors import KernelError
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Deadlock, Kernel, KernelConfig
from kernel_model.process.proc import RUNNABLE, SLEEPING, Thread
from kernel_model.process.sched import Scheduler

ROOT = Path(__file__).resolve().parents[4]


class _Clock:
    @staticmethod
    def monotonic_ns() -> int:
        return 0


def _threads(count: int):
    scheduler = Scheduler(_Clock(), quantum=7)
    threads = [Thread(tid=100 + i, process=SimpleNamespace(pid=100), kstack_top=0)
               for i in range(count)]
    for thread in threads:
        scheduler.add(thread)
    return scheduler, threads


def test_a_held_thread_is_never_picked_until_every_hold_is_released():
    scheduler, (a, b, c) = _threads(3)
    scheduler.suspend(b)
    scheduler.suspend(b)                       # held twice (two tools, or one tool twice)
    assert scheduler.rotate(a) is c and scheduler.rotate(c) is a
    assert scheduler.runnable() == [a, c]
    scheduler.resume(b)
    assert scheduler.rotate(a) is c            # one hold is left
    scheduler.resume(b)
    assert scheduler.rotate(a) is b
    with pytest.raises(KernelError, match="not suspended"):
        scheduler.resume(b)


def test_a_held_sleeper_keeps_its_wakeup():
    scheduler, (a, b) = _threads(2)
    scheduler.sleep(b, ["pipe"], "read", None)
    scheduler.suspend(b)
    scheduler.wakeup("pipe")                   # arrives while held: not lost
    assert b.state == RUNNABLE and scheduler.rotate(a) is a
    scheduler.resume(b)
    assert scheduler.rotate(a) is b


def test_the_slice_still_ends_while_a_runnable_thread_is_held():
    """The held thread must get its turn once released: the quantum keeps ticking."""
    scheduler, (a, b) = _threads(2)
    scheduler.suspend(b)
    assert scheduler.slice_for(a) == 7
    scheduler.sleep(b, ["x"], "x", None)
    assert scheduler.slice_for(a) == 0         # nothing else could run anyway
    assert b.state == SLEEPING


def test_the_door_holds_every_thread_of_the_space_and_the_deadlock_report_says_so():
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / "x86_64" / "hello").encode()
    proc = kernel.spawn(path, [path], [])
    debug = kernel.debug
    assert debug.space_threads(proc) == proc.threads
    debug.suspend_thread(proc.threads[0])
    assert debug.is_suspended(proc.threads[0])
    with pytest.raises(Deadlock, match="suspended by a tool"):
        kernel.run(proc)
