"""Each task's CPU time, split into user and system time as Linux accounts it
(kernel/sched/cputime.c), for times(2), getrusage(2) and wait4's rusage.

The split follows the virtual clock's own charges (clock.py): what a preempted slice's
instructions add to the clock is user time of the thread that ran them, what each system call
adds (SYSCALL_COST_NS) is system time of the thread that made it: the kernel model's own work
is the only system time there is, and it is the same on every run. Sleeps and waits are
nobody's CPU time. As for the clock, a slice that a system call ends is charged nothing, and a
lone task with nothing due (no timer, no sleeper with a deadline, no other runnable task) runs
in one unlimited slice: its loop's instructions become user time only while something is due.
A process's times are the sum of its threads', those that exited included (Linux's
signal->utime); a child's, and its own waited-for children's, are added to the parent's
children's times when the parent reaps it with wait4 or waitid (wait_task_zombie), not when
it is reaped without a wait (SIGCHLD ignored, init's children).

The CPU clocks (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID) and the CPU interval timers
still read the whole run's virtual clock (timecalls.py, itimer.py).
"""


def charge_user(thread, ns: int) -> None:
    thread.utime_ns += ns
    thread.process.utime_ns += ns


def charge_system(thread, ns: int) -> None:
    thread.stime_ns += ns
    thread.process.stime_ns += ns


def reaped_by_wait(parent, child) -> None:
    """wait_task_zombie: the child's times and its children's go to the parent's children's."""
    parent.cutime_ns += child.utime_ns + child.cutime_ns
    parent.cstime_ns += child.stime_ns + child.cstime_ns
