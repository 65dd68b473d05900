"""Wakeup preemption (kernel_model/process/sched.py), for any threads, sleeps and waker: after
wakeup(channel) the next thread picked is the first sleeper on that channel in creation order,
whichever thread was current and wherever the round robin stood; then the policy is plain
again (the mark is spent)."""
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from kernel_model.process.proc import RUNNABLE, SLEEPING, Thread
from kernel_model.process.sched import Scheduler


class _Clock:
    @staticmethod
    def monotonic_ns() -> int:
        return 0


@st.composite
def _setups(draw):
    count = draw(st.integers(min_value=2, max_value=7))
    # each thread sleeps on channel 0..2 or runs (None); at least one sleeps on the woken one
    channels = draw(st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=count, max_size=count))
    woken = draw(st.integers(0, 2))
    sleeper = draw(st.integers(0, count - 1))
    channels[sleeper] = woken
    runners = [i for i, c in enumerate(channels) if c is None]
    current = draw(st.sampled_from(runners)) if runners and draw(st.booleans()) else None
    return channels, woken, current


@given(_setups(), st.booleans())
def test_the_first_sleeper_woken_runs_next(setup, by_rotation):
    channels, woken, current_index = setup
    scheduler = Scheduler(_Clock(), quantum=7)
    threads = [Thread(tid=100 + i, process=SimpleNamespace(pid=100 + i), kstack_top=0)
               for i in range(len(channels))]
    for thread, channel in zip(threads, channels):
        scheduler.add(thread)
        if channel is not None:
            scheduler.sleep(thread, [("chan", channel)], "sleep", None)
    current = threads[current_index] if current_index is not None else None
    scheduler.wakeup(("chan", woken))
    expected = next(t for t, c in zip(threads, channels) if c == woken)
    assert all(t.state == RUNNABLE for t, c in zip(threads, channels) if c == woken)
    assert all(t.state == SLEEPING for t, c in zip(threads, channels) if c not in (None, woken))
    picked = scheduler.rotate(current) if by_rotation else scheduler.pick(current)
    assert picked is expected
    assert scheduler.preempting is None
    assert scheduler.pick(picked) is picked            # plain policy: it keeps the CPU
