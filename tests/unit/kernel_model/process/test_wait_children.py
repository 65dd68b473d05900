"""A child's news wakes only the parent's waits it is eligible for (process/wait_children.py,
kernel/exit.c child_wait_callback: eligible_pid); the first woken preempts the waker."""
from types import SimpleNamespace

from kernel_model.blocking import CONDITION_MET
from kernel_model.process.proc import RUNNABLE, SLEEPING, Thread
from kernel_model.process.sched import Scheduler
from kernel_model.process.wait_children import children_channel, wake_waiters, waiting_for


class _Clock:
    @staticmethod
    def monotonic_ns() -> int:
        return 0


def test_a_sibling_s_exit_leaves_a_wait_for_another_pid_asleep():
    scheduler = Scheduler(_Clock())
    parent = SimpleNamespace(pid=100, threads=[])
    exiting = Thread(tid=103, process=SimpleNamespace(pid=103), kstack_top=0)
    for_pid, for_any, for_group = (Thread(tid=100 + i, process=parent, kstack_top=0)
                                   for i in range(3))
    parent.threads = [for_pid, for_any, for_group]
    for thread in (exiting, *parent.threads):
        scheduler.add(thread)
    child = SimpleNamespace(pid=103, pgid=103)
    for thread, selector in ((for_pid, lambda c: c.pid == 102), (for_any, lambda c: True),
                             (for_group, lambda c: c.pgid == 100)):
        waiting_for(thread, selector)
        scheduler.sleep(thread, [children_channel(parent.pid)], "wait4", None)
    wake_waiters(SimpleNamespace(scheduler=scheduler), parent, child)
    assert [t.state for t in parent.threads] == [SLEEPING, RUNNABLE, SLEEPING]
    assert CONDITION_MET in for_any.restart and CONDITION_MET not in for_pid.restart
    assert scheduler.pick(exiting) is for_any                # woken: it runs next
