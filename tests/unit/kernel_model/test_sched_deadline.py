"""kernel_model/sched_deadline.py: whatever the order of requests, the deadline tasks admitted
never hold more than the CPUs' share (95 % of each: sched_dl_overflow), and every admitted
task's parameters passed __checkparam_dl."""
from types import SimpleNamespace

from hypothesis import given, strategies as st

from kernel_model import sched_deadline
from kernel_model.sched_attrs import SCHED_DEADLINE, SCHED_NORMAL

MS = 10**6
REQUEST = st.tuples(st.integers(0, 3), st.integers(1, 40).map(lambda v: v * MS // 4),
                    st.integers(1, 40).map(lambda v: v * MS))
SEEN = set()


def _share(threads) -> float:
    return sum(t.dl[0] / t.dl[2] for t in threads if t.sched_policy == SCHED_DEADLINE)


@given(st.lists(REQUEST, min_size=1, max_size=12))
def test_admitted_bandwidth_stays_within_the_cpus_share(requests):
    threads = [SimpleNamespace(sched_policy=SCHED_NORMAL, dl=(0, 0, 0)) for _ in range(4)]
    for index, runtime, period in requests:
        task = threads[index]
        if not sched_deadline.params_valid(runtime, period, period):
            SEEN.add("invalid")
            continue
        if sched_deadline.admits(threads, task, runtime, period):
            SEEN.add("admitted")
            task.sched_policy, task.dl = SCHED_DEADLINE, sched_deadline.stored(runtime, period, 0)
        else:
            SEEN.add("refused")
        assert _share(threads) <= 0.95 + 1e-6


def test_each_outcome_was_reached():
    test_admitted_bandwidth_stays_within_the_cpus_share()
    assert SEEN == {"invalid", "admitted", "refused"}
