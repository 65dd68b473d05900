"""What a parent learns of its child's stops and continues (kernel/signal.c do_notify_parent_cldstop,
kernel/exit.c wait_task_stopped / wait_task_continued).

When a stop signal stops a process, or SIGCONT resumes a stopped one, the process keeps a report
for its parent (Process.stop_report: CLD_STOPPED and the signal, or CLD_CONTINUED) and the
parent is woken from its waits and sent SIGCHLD with that si_code, unless its SIGCHLD action has
SA_NOCLDSTOP. wait4 with WUNTRACED and waitid with WSTOPPED take a stop report (status
(sig << 8) | 0x7f), WCONTINUED a continue report (status 0xffff); the report is used up then,
unless waitid was given WNOWAIT.
"""
from .wait_children import wake_waiters

CLD_STOPPED, CLD_CONTINUED = 5, 6
SIGCHLD, SIGCONT = 17, 18
SA_NOCLDSTOP = 1


def stopped(kernel, proc, sig: int) -> None:
    _report(kernel, proc, (CLD_STOPPED, sig))


def continued(kernel, proc) -> None:
    _report(kernel, proc, (CLD_CONTINUED, SIGCONT))


def wait_status(report: tuple[int, int]) -> int:
    """The wait status word of a report (include/uapi/linux/wait.h's encodings)."""
    code, sig = report
    return 0xFFFF if code == CLD_CONTINUED else (sig << 8) | 0x7F


def _report(kernel, proc, report: tuple[int, int]) -> None:
    proc.stop_report = report
    parent = kernel.processes.get(proc.ppid)
    if parent is None or parent.state == "zombie":
        return
    wake_waiters(kernel, parent, proc)          # the waits `proc` is eligible for
    _handler, flags, _restorer, _mask = parent.sigactions.get(SIGCHLD, (0, 0, 0, 0))
    if not flags & SA_NOCLDSTOP:
        # do_notify_parent_cldstop: the child and its real uid (task_uid)
        kernel.signals.post(parent, SIGCHLD, info={"code": report[0], "pid": proc.pid,
                                                   "uid": proc.creds.uid,
                                                   "status": report[1]})
