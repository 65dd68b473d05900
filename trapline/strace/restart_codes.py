"""The code strace shows as the result of a sleeping call a signal interrupted (`= ? ERESTARTSYS`,
`= ? ERESTART_RESTARTBLOCK`...): the value Linux leaves in the result register for the signal's
delivery to restart or not (arch/x86/kernel/signal.c arch_do_signal_or_restart), which a tracer
reads there at the signal's stop."""

# What a sleeping call returns to the kernel when a signal interrupts it, which strace shows
# as its result: ERESTARTNOHAND for pause and sigsuspend (kernel/signal.c), ppoll, select and
# pselect6 (fs/select.c), msgrcv and msgsnd (ipc/msg.c) and an absolute sleep;
# ERESTART_RESTARTBLOCK for the relative sleeps (kernel/time/hrtimer.c), poll with a timeout
# and restart_syscall itself; EINTR for the calls that fail with it; ERESTARTSYS for the others.
ERESTARTSYS, ERESTARTNOHAND, ERESTART_RESTARTBLOCK, EINTR = 512, 514, 516, 4
RESTART_ERRNOS = {"pause": ERESTARTNOHAND, "rt_sigsuspend": ERESTARTNOHAND,
                  "sigsuspend": ERESTARTNOHAND, "nanosleep": ERESTART_RESTARTBLOCK,
                  "clock_nanosleep": ERESTART_RESTARTBLOCK,
                  "clock_nanosleep_time64": ERESTART_RESTARTBLOCK,
                  "restart_syscall": ERESTART_RESTARTBLOCK,
                  "ppoll": ERESTARTNOHAND, "ppoll_time64": ERESTARTNOHAND,
                  "select": ERESTARTNOHAND, "_newselect": ERESTARTNOHAND,
                  "pselect6": ERESTARTNOHAND, "pselect6_time64": ERESTARTNOHAND,
                  "msgrcv": ERESTARTNOHAND, "msgsnd": ERESTARTNOHAND,         # ipc/msg.c
                  "io_pgetevents": ERESTARTNOHAND, "io_pgetevents_time64": ERESTARTNOHAND,
                  # the calls that fail with EINTR itself (signal(7): never restarted)
                  **dict.fromkeys(("epoll_wait", "epoll_pwait", "epoll_pwait2", "rt_sigtimedwait",
                                   "rt_sigtimedwait_time64", "semop", "semtimedop",
                                   "semtimedop_time64", "io_getevents"), EINTR)}
TIMER_ABSTIME = 1


def restart_errno(name: str, args) -> int:
    """What strace shows `name`, asleep with `args`, return when a signal interrupted it."""
    if name.startswith("clock_nanosleep") and len(args) > 1 and args[1] & TIMER_ABSTIME:
        return ERESTARTNOHAND
    if name == "poll" and len(args) > 2:           # an infinite timeout (-1): no restart block
        return ERESTART_RESTARTBLOCK if args[2] & 0x80000000 == 0 else ERESTARTNOHAND
    return RESTART_ERRNOS.get(name, ERESTARTSYS)
