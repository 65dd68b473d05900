"""sched_yield gives the CPU to the next runnable thread (process/sched.py yield_turn; Linux's
do_sched_yield with yield_task_fair's skip buddy): it was a no-op, so a thread spinning on
sched_yield for its sibling kept the CPU for its whole quantum (LTP's fuzzy-sync tests, such as
sendmsg03, yield in their waits on one CPU and spun ten thousand times a round). A thread alone
goes on; a sleeping or held thread is passed over. Property: threads that all yield at every
pick take turns in creation order."""

from hypothesis import given, strategies as st

from .sched_scene import scheduler_with_threads as _threads


def test_a_yield_lets_the_next_runnable_thread_run():
    scheduler, (first, sleeper, held, last) = _threads(4)
    scheduler.sleep(sleeper, ["pipe"], "read on pipe", None)
    scheduler.suspend(held)
    scheduler.yield_turn(first)
    assert scheduler.preempting is last            # the call's slice ends (dispatch.py)
    assert scheduler.pick(first) is last
    scheduler.yield_turn(last)
    assert scheduler.pick(last) is first           # round again, from the start


def test_a_thread_alone_goes_on():
    scheduler, (alone, sleeper) = _threads(2)
    scheduler.sleep(sleeper, ["pipe"], "read on pipe", None)
    scheduler.yield_turn(alone)
    assert scheduler.preempting is None
    assert scheduler.pick(alone) is alone


@given(st.integers(min_value=2, max_value=6), st.data())
def test_threads_yielding_at_every_pick_take_turns(count, data):
    scheduler, threads = _threads(count)
    sleeping = data.draw(st.sets(st.sampled_from(threads), max_size=count - 2))
    for thread in sleeping:
        scheduler.sleep(thread, ["pipe"], "read on pipe", None)
    awake = [t for t in threads if t not in sleeping]
    assert len(awake) >= 2                          # a real choice every time
    current, seen = awake[0], []
    for _ in range(2 * len(awake)):
        scheduler.yield_turn(current)
        current = scheduler.pick(current)
        seen.append(current)
    assert seen == (awake[1:] + awake[:1]) * 2
