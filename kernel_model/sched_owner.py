"""kernel/sched/core.c check_same_owner: whether the caller may change another task's
scheduling (policy, parameters, affinity) without CAP_SYS_NICE — its effective uid is the
target's effective or real uid. The virtual init (pid 1) is root's."""

CAP_SYS_NICE = 23


def may_reschedule(caller_creds, target_creds) -> bool:
    if caller_creds.capable(CAP_SYS_NICE):
        return True
    return caller_creds.euid in (target_creds.euid, target_creds.uid)
