"""A task's scheduling attributes and what a new task inherits of them (kernel/sched/core.c
sched_fork). The calls that read and change them: syscalls/impls/priority.py (nice, I/O
priority) and syscalls/impls/sched_policy.py (policy, real-time priority)."""

SCHED_NORMAL, SCHED_FIFO, SCHED_RR, SCHED_BATCH, SCHED_IDLE, SCHED_DEADLINE = 0, 1, 2, 3, 5, 6
SCHED_RESET_ON_FORK = 0x40000000
RT_POLICIES = frozenset({SCHED_FIFO, SCHED_RR})


def inherited(parent) -> dict:
    """The Thread fields a task made by fork or clone takes from `parent`: nice value, I/O
    priority, policy, real-time priority and deadline parameters; a reset-on-fork parent's child starts without
    the flag, with SCHED_NORMAL instead of a real-time or deadline policy and nice >= 0."""
    policy, rt_priority, nice = parent.sched_policy, parent.rt_priority, parent.nice
    dl = parent.dl
    if policy & SCHED_RESET_ON_FORK:
        policy &= ~SCHED_RESET_ON_FORK
        if policy in RT_POLICIES or policy == SCHED_DEADLINE:
            policy, rt_priority, dl = SCHED_NORMAL, 0, (0, 0, 0)
        nice = max(nice, 0)
    return {"sched_policy": policy, "rt_priority": rt_priority, "nice": nice,
            "ioprio": parent.ioprio, "dl": dl}
