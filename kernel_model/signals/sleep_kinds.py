"""How a signal ends each sleeping call (NEVER_RESTARTED, RESTARTED_WITHOUT_HANDLER,
EINTR_WITHOUT_HANDLER: the codes Linux's sleeps return, which arch_do_signal_or_restart restarts
or not), and which call a thread sleeps in, as those rules name it (sleeping_in).

i386's ipc(2) is a multiplexer (ipc/syscall.c ksys_ipc): it returns what its operation returns,
semop's and semtimedop's -EINTR (ipc/sem.c) or msgsnd's and msgrcv's -ERESTARTNOHAND
(ipc/msg.c), so a sleeping ipc call is the operation its first argument names (the call
number's low 16 bits; ebx, still the caller's, as the call was rewound to be made again).
Asked at a signal's delivery, when the thread's registers are live in its Machine.
"""
NEVER_RESTARTED = frozenset({"pause", "rt_sigsuspend", "sigsuspend", "nanosleep", "clock_nanosleep",
                             "clock_nanosleep_time64", "poll", "ppoll", "select", "_newselect",
                             "pselect6", "ppoll_time64", "pselect6_time64",
                             # signal(7): System V IPC's sleeps end in EINTR whatever SA_RESTART
                             # says for a handler (ipc/sem.c: -EINTR; ipc/msg.c -ERESTARTNOHAND);
                             # i386 reaches them through ipc(2), whose other calls never sleep
                             "msgrcv", "msgsnd", "semop", "semtimedop", "semtimedop_time64",
                             "ipc",
                             "rt_sigtimedwait", "rt_sigtimedwait_time64",
                             # fs/aio.c: -EINTR (io_pgetevents' -ERESTARTNOHAND: no handler)
                             "io_getevents", "io_pgetevents", "io_pgetevents_time64",
                             # fs/eventpoll.c ep_poll: -EINTR whatever SA_RESTART says
                             "epoll_wait", "epoll_pwait", "epoll_pwait2"})
# Of those, the ones that end with -ERESTARTNOHAND or -ERESTART_RESTARTBLOCK (pause, the
# sleeps, poll and select; msgrcv and msgsnd: ipc/msg.c's -ERESTARTNOHAND; io_pgetevents):
# EINTR only for a handler, so a signal without one (a traced task's ignored SIGCHLD, a stop
# signal) has them made again; the others end with EINTR whatever it is.
RESTARTED_WITHOUT_HANDLER = frozenset({
    "pause", "rt_sigsuspend", "sigsuspend", "nanosleep", "clock_nanosleep",
    "clock_nanosleep_time64", "poll", "ppoll", "ppoll_time64", "select", "_newselect", "pselect6",
    "pselect6_time64", "msgrcv", "msgsnd", "io_pgetevents", "io_pgetevents_time64"})
# The others: an ignored signal queued for a ptraced task ends them with EINTR
# (signals/traced_calls.py), and so does a stop signal (signals/group_stop.py).
EINTR_WITHOUT_HANDLER = NEVER_RESTARTED - RESTARTED_WITHOUT_HANDLER

IPC_SLEEPS = {1: "semop", 4: "semtimedop", 11: "msgsnd", 12: "msgrcv"}


def sleeping_in(thread) -> str | None:
    call = thread.blocked_call
    if call != "ipc":
        return call
    return IPC_SLEEPS.get(thread.process.machine.reg("ebx") & 0xFFFF, call)
