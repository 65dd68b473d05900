"""A tracer's syscall stop hands the CPU over (process/sched.py hand_over): the next pick goes
round to the next runnable thread once, as ptrace_stop's schedule() lets the other tracees of
a one-CPU machine run while strace prints; a woken thread still preempts first, and a thread
alone goes on. With every thread handing over at each pick, the runnable ones take turns in
creation order (a property over the number of threads and which of them sleep)."""

from hypothesis import given, strategies as st

from kernel_model.process.proc import RUNNABLE
from .sched_scene import scheduler_with_threads as _threads


def test_a_stopped_thread_lets_the_next_runnable_one_run_once():
    scheduler, (parent, child, other) = _threads(3)
    scheduler.sleep(other, ["pipe"], "read on pipe", None)
    scheduler.hand_over(parent)
    assert scheduler.pick(parent) is child
    assert scheduler.pick(child) is child              # spent: the child goes on
    scheduler.hand_over(child)
    assert scheduler.pick(child) is parent


def test_a_woken_thread_still_runs_first():
    scheduler, (writer, other, reader) = _threads(3)
    scheduler.sleep(reader, ["pipe"], "read on pipe", None)
    scheduler.wakeup("pipe")
    scheduler.hand_over(writer)
    assert scheduler.pick(writer) is reader
    assert scheduler.pick(reader) is reader            # the hand-over was the writer's, spent


def test_a_thread_alone_goes_on_and_asks_for_no_hand_over():
    scheduler, (alone, sleeper) = _threads(2)
    scheduler.sleep(sleeper, ["pipe"], "read on pipe", None)
    assert not scheduler.others_runnable(alone)
    scheduler.hand_over(alone)
    assert scheduler.pick(alone) is alone


@given(st.integers(min_value=2, max_value=6), st.data())
def test_threads_handing_over_at_every_stop_take_turns(count, data):
    scheduler, threads = _threads(count)
    # two runnable threads at least, in any places of the creation order
    sleeping = data.draw(st.sets(st.sampled_from(threads), max_size=count - 2))
    for thread in sleeping:
        scheduler.sleep(thread, [("sleep", thread.tid)], "sleep", None)
    runnable = [t for t in threads if t.state == RUNNABLE]
    current, order = runnable[0], [runnable[0]]
    for _ in range(2 * len(runnable)):
        scheduler.hand_over(current)
        current = scheduler.pick(current)
        order.append(current)
    assert order == (runnable * 3)[:len(order)]
    assert len(set(order)) == len(runnable) >= 2 and scheduler.others_runnable(runnable[0])
