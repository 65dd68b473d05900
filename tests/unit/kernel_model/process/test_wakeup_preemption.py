"""Wakeup preemption (process/sched.py): the first thread a wakeup(channel) makes runnable runs
next, before the waker goes on and before the round-robin order; once only; never a thread
that cannot run by then. A waker's call returns to it first: the run loop ends its slice there
(Kernel.may_continue)."""

from kernel_model.process.proc import RUNNABLE, SLEEPING, ZOMBIE
from .sched_scene import scheduler_with_threads as _threads


def test_the_woken_thread_runs_next_instead_of_its_waker():
    scheduler, (writer, other, reader) = _threads(3)
    scheduler.sleep(reader, ["pipe"], "read on pipe", None)
    scheduler.wakeup("pipe")
    assert reader.state == RUNNABLE
    assert scheduler.pick(writer) is reader            # not the writer, which could go on
    assert scheduler.pick(reader) is reader            # the mark is spent: plain policy again
    scheduler.sleep(reader, ["pipe"], "read on pipe", None)
    assert scheduler.pick(reader) is writer            # round robin from the reader (wraps)


def test_the_first_of_several_woken_threads_preempts():
    scheduler, (waker, other, first, second) = _threads(4)
    scheduler.sleep(first, ["queue"], "msgrcv", None)
    scheduler.sleep(second, ["queue"], "msgrcv", None)
    scheduler.wakeup("queue")
    assert scheduler.rotate(waker) is first            # a quantum's end: still the woken one,
    assert scheduler.rotate(first) is second           # not `other`, next in the round
    assert scheduler.rotate(second) is waker


def test_a_woken_thread_that_cannot_run_any_more_does_not_preempt():
    scheduler, (waker, woken, other) = _threads(3)
    scheduler.sleep(woken, ["pipe"], "read on pipe", None)
    scheduler.wakeup("pipe")
    woken.state = ZOMBIE                               # killed before it ran
    assert scheduler.pick(waker) is waker
    scheduler.sleep(woken, ["pipe"], "read on pipe", None)
    woken.state = SLEEPING
    scheduler.wakeup("pipe")
    scheduler.suspend(woken)                           # held by a tool
    assert scheduler.pick(waker) is waker and scheduler.preempting is None


def test_a_wakeup_with_no_sleeper_leaves_the_policy_alone():
    scheduler, (a, b) = _threads(2)
    scheduler.wakeup("nobody")
    assert scheduler.preempting is None and scheduler.pick(a) is a
