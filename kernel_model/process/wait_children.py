"""Which of a parent's sleeping waits (wait4, waitpid, waitid) a child's news wakes.

kernel/exit.c: a child's exit (do_notify_parent) and its stops and continues
(do_notify_parent_cldstop) call __wake_up_parent, which wakes the parent's wait_chldexit
queue with the child as key; each waiter's child_wait_callback wakes it only if the child is
eligible for it (eligible_pid: the pid it names, its process group, or any child). A
wait4(pid) asleep when a sibling exits sleeps on: only the SIGCHLD that exit sends may
interrupt it. A woken waiter's call completes before a pending signal is delivered (do_wait
looks for the child before signal_pending: blocking.completes_first).
"""
from ..blocking import CONDITION_MET
from .proc import SLEEPING

WAITS_FOR = "waits_for"     # thread.restart: which children a sleeping wait takes (a predicate)


def children_channel(parent_pid: int) -> tuple:
    """The channel a parent's waits sleep on."""
    return ("children", parent_pid)


def waiting_for(thread, selector) -> None:
    """A wait of `thread` is about to sleep for the children `selector` accepts."""
    thread.restart[WAITS_FOR] = selector


def wake_waiters(kernel, parent, child) -> None:
    """Wake the threads of `parent` asleep in a wait that `child` is eligible for; the first
    one woken preempts the waker (process/sched.py)."""
    channel = children_channel(parent.pid)
    for thread in parent.threads:
        if thread.state == SLEEPING and channel in thread.wait_channels and \
                thread.restart.get(WAITS_FOR, _any_child)(child):
            thread.restart[CONDITION_MET] = True
            kernel.scheduler.wake(thread)


def _any_child(child) -> bool:
    return True
