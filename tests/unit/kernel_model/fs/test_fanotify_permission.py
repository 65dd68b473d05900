"""fanotify's permission events (notify/fanotify_perm.py after fs/notify/fanotify/fanotify.c
fanotify_get_response): a task waits until every group that asked has answered; its retries
find the same events (no group is asked twice); EPERM when any group denied, else it goes on;
answers are taken once, so the next read asks again. And a property: whatever order the
groups answer in and however often the task retries meanwhile, each group hears one event,
the task sleeps exactly until the last answer, and the outcome is EPERM exactly when one
denied. Before, fanotify_init was ENOSYS."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.fsnotify import FAN_ACCESS_PERM
from kernel_model.notify.fanotify_perm import FAN_ALLOW, FAN_DENY, PermissionWaits


class Node:
    def stat(self):
        class St:
            dev, ino = 1, 7
        return St()


class File:
    node = Node()


class Group:
    def __init__(self):
        self.events = []

    def queue_event(self, mask, file, perm):
        self.events.append((mask, perm))


def check(waits, groups, tid=100):
    """The outcome of one try: 'sleep', 'EPERM' or 'go'."""
    try:
        waits.check(tid, File(), FAN_ACCESS_PERM, [(g, FAN_ACCESS_PERM) for g in groups])
    except WouldBlock:
        return "sleep"
    except GuestErrno as error:
        assert error.errno == E.EPERM
        return "EPERM"
    return "go"


def test_two_groups_both_answer_before_the_task_goes():
    woken = []
    waits, a, b = PermissionWaits(woken.append), Group(), Group()
    assert check(waits, [a, b]) == "sleep"
    a.events[0][1].answer(FAN_ALLOW)
    assert woken == [a.events[0][1].channel]
    assert check(waits, [a, b]) == "sleep"          # b thinks still; a is not asked again
    assert len(a.events) == len(b.events) == 1
    b.events[0][1].answer(FAN_ALLOW)
    assert check(waits, [a, b]) == "go"
    assert check(waits, [a, b]) == "sleep"          # the next read is a new event
    assert len(a.events) == 2


def test_a_denial_is_eperm_and_a_late_second_answer_changes_nothing():
    waits, a = PermissionWaits(lambda channel: None), Group()
    check(waits, [a])
    perm = a.events[0][1]
    perm.answer(FAN_DENY)
    perm.answer(FAN_ALLOW)                           # the group closing later: already answered
    assert check(waits, [a]) == "EPERM"


@given(st.lists(st.sampled_from([FAN_ALLOW, FAN_DENY]), min_size=1, max_size=4),
       st.randoms(use_true_random=False), st.integers(0, 3))
def test_the_task_waits_for_every_group_once(answers, rng, retries):
    """`retries`: how often the task tries again before each answer."""
    waits = PermissionWaits(lambda channel: None)
    groups = [Group() for _ in answers]
    assert check(waits, groups) == "sleep"
    order = list(range(len(groups)))
    rng.shuffle(order)
    for done, index in enumerate(order, 1):
        for _ in range(retries):
            assert check(waits, groups) == "sleep"  # retries before this answer
        groups[index].events[0][1].answer(answers[index])
        if done < len(order):
            assert check(waits, groups) == "sleep"
    assert all(len(g.events) == 1 for g in groups)
    assert check(waits, groups) == ("EPERM" if FAN_DENY in answers else "go")
