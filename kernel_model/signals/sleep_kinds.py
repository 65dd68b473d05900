"""How a signal ends each sleeping call (NEVER_RESTARTED, RESTARTED_WITHOUT_HANDLER,
EINTR_WITHOUT_HANDLER: the codes Linux's sleeps return, which arch_do_signal_or_restart restarts
or not), and which call a thread sleeps in, as those rules name it (sleeping_in).

i386's ipc(2) is a multiplexer (ipc/syscall.c ksys_ipc): it returns what its operation returns,
semop's and semtimedop's -EINTR (ipc/sem.c) or msgsnd's and msgrcv's -ERESTARTNOHAND
(ipc/msg.c), so a sleeping ipc call sleeps as the operation it stands for: its blocked_call is
that operation's name (syscalls/impls/sysv_ipc.py SLEEPERS).
"""
from emu.registers import REGISTER_IDS

from ..blocking import RESTART_BLOCK

NEVER_RESTARTED = frozenset({"pause", "rt_sigsuspend", "sigsuspend", "nanosleep", "clock_nanosleep",
                             "clock_nanosleep_time64", "poll", "ppoll", "select", "_newselect",
                             "pselect6", "ppoll_time64", "pselect6_time64",
                             # signal(7): System V IPC's sleeps end in EINTR whatever SA_RESTART
                             # says for a handler (ipc/sem.c: -EINTR; ipc/msg.c -ERESTARTNOHAND);
                             # i386 reaches them through ipc(2), which sleeps as its operation
                             "msgrcv", "msgsnd", "semop", "semtimedop", "semtimedop_time64",
                             "rt_sigtimedwait", "rt_sigtimedwait_time64",
                             # fs/aio.c: -EINTR (io_pgetevents' -ERESTARTNOHAND: no handler)
                             "io_getevents", "io_pgetevents", "io_pgetevents_time64",
                             # fs/eventpoll.c ep_poll: -EINTR whatever SA_RESTART says
                             "epoll_wait", "epoll_pwait", "epoll_pwait2",
                             # net/core/sock.c sock_intr_errno: -EINTR under a timeout
                             "socket wait with a timeout",
                             # kernel/futex/waitwake.c futex_wait: -ERESTART_RESTARTBLOCK
                             "futex wait with a timeout"})
# Of those, the ones that end with -ERESTARTNOHAND or -ERESTART_RESTARTBLOCK (pause, the
# sleeps, poll and select; msgrcv and msgsnd: ipc/msg.c's -ERESTARTNOHAND; io_pgetevents):
# EINTR only for a handler, so a signal without one (a traced task's ignored SIGCHLD, a stop
# signal) has them made again; the others end with EINTR whatever it is.
RESTARTED_WITHOUT_HANDLER = frozenset({
    "pause", "rt_sigsuspend", "sigsuspend", "nanosleep", "clock_nanosleep",
    "clock_nanosleep_time64", "poll", "ppoll", "ppoll_time64", "select", "_newselect", "pselect6",
    "pselect6_time64", "msgrcv", "msgsnd", "io_pgetevents", "io_pgetevents_time64",
    "futex wait with a timeout"})
# The others: an ignored signal queued for a ptraced task ends them with EINTR
# (signals/traced_calls.py), and so does a stop signal (signals/group_stop.py).
EINTR_WITHOUT_HANDLER = NEVER_RESTARTED - RESTARTED_WITHOUT_HANDLER

FUTEX_CALLS = frozenset({"futex", "futex_time64"})
# A socket's wait under SO_RCVTIMEO or SO_SNDTIMEO (a recv, an accept, a send, a connect) ends
# with sock_intr_errno(timeo): -EINTR when there is a timeout, -ERESTARTSYS for ever. The call
# marks its restart state with this key when it sleeps so (syscalls/impls/socket_args.py).
TIMED_SOCKET_WAIT = "socket wait with a timeout"
# A futex wait under a timeout returns -ERESTART_RESTARTBLOCK (futex_wait_restart), one for ever
# -ERESTARTSYS: told by the restart block its sleep sets (syscalls/impls/futex.py).
TIMED_FUTEX_WAIT = "futex wait with a timeout"
EINTR, ERESTARTSYS, ERESTARTNOHAND, ERESTART_RESTARTBLOCK = 4, 512, 514, 516
TIMER_ABSTIME = 1


def sleeping_in(thread) -> str | None:
    return thread_kind(thread)


def saved_register(thread, name: str) -> int:
    """`thread`'s register: live in its Machine while it runs, else in its saved context."""
    context = thread.context
    return thread.process.machine.reg(name) if context is None else \
        context.reg_read(REGISTER_IDS[name])


def thread_kind(thread) -> str | None:
    """The call `thread` sleeps in, or TIMED_SOCKET_WAIT, TIMED_FUTEX_WAIT for a socket's or a
    futex's wait under a timeout."""
    restart, call = thread.restart, thread.blocked_call
    if restart.get(TIMED_SOCKET_WAIT):
        return TIMED_SOCKET_WAIT
    return TIMED_FUTEX_WAIT if call in FUTEX_CALLS and restart.get(RESTART_BLOCK) else call


def restart_code(call: str, args: tuple[int, ...]) -> int:
    """The code `call`, asleep with `args` (its first three), returns when a signal wakes it,
    before arch_do_signal_or_restart looks at it: -ERESTART_RESTARTBLOCK for a relative sleep
    (kernel/time/hrtimer.c do_nanosleep) and poll with a timeout (fs/select.c do_sys_poll),
    -ERESTARTNOHAND for pause, sigsuspend, an absolute sleep, poll for ever, select, ppoll,
    pselect6, msgrcv, msgsnd and io_pgetevents, -EINTR for EINTR_WITHOUT_HANDLER's calls,
    else -ERESTARTSYS (a read, a wait, a futex...). Returned as the positive errno."""
    kind = call
    if kind in EINTR_WITHOUT_HANDLER:
        return EINTR
    if kind in ("nanosleep", "restart_syscall", TIMED_FUTEX_WAIT) or \
            kind.startswith("clock_nanosleep") and not args[1] & TIMER_ABSTIME:
        return ERESTART_RESTARTBLOCK
    if kind == "poll":                      # an infinite timeout (negative): no restart block
        return ERESTARTNOHAND if args[2] & 0x80000000 else ERESTART_RESTARTBLOCK
    return ERESTARTNOHAND if kind in RESTARTED_WITHOUT_HANDLER else ERESTARTSYS
