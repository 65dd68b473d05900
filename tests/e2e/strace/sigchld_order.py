"""Where a traced parent takes an exited child's SIGCHLD: the host's timing, not the program's.

A parent with no SIGCHLD handler takes the signal (strace's `--- SIGCHLD {...} ---`) at the
first point after the child's exit where it returns to user mode with the signal unblocked: a
syscall's return, the unblocking rt_sigprocmask of glibc's fork, before or after the wait that
reaps the child. How far the parent got when the child exited is the host scheduler's (native
strace -f on one CPU, 6 runs under load: vfork_status's and sockets' SIGCHLD before or after
wait4, spawn_tree's after the first or the second fork's unblock; see the harness's measures).

Under ptrace the signal is queued even though it is ignored (kernel/signal.c sig_ignored:
sig_task_ignored is not consulted for a ptraced task), so a parent asleep when the child exits
is woken: a restartable call ends with `= ? ERESTARTSYS`, the signal is shown and the call is
made again (natively wait4 for a sibling, read of a socket, in some runs only).

`ordered` puts each such SIGCHLD right before the wait in the same process that reaps that
child, and drops the ERESTARTSYS line of a call the SIGCHLD interrupted when the very same call
is made again after it. Nothing else moves: a SIGCHLD whose child no wait of the process reaps,
a stopped or continued child's, and every SIGCHLD of a trace where some process installs a
SIGCHLD handler (its handler's lines follow the signal) stay where they were.
"""
from __future__ import annotations

import re

# rt_sigaction/sigaction with a handler address (not SIG_DFL, not SIG_IGN), or signal(2)'s.
# (-X raw spells the signal 17, SIG_DFL 0 and SIG_IGN 0x1, the child's si_code 0x1-0x3; -X
# verbose the number and the name in a comment: 17 /* SIGCHLD */, 0x1 /* CLD_EXITED */.)
_SIGCHLD = r"(?:SIGCHLD|17(?: /\* SIGCHLD \*/)?)"
_HANDLER = re.compile(rf"\b(?:rt_)?sigaction\({_SIGCHLD}, \{{sa_handler=(?!SIG_DFL\b|SIG_IGN\b|0\b|0x1\b)"
                      rf"|\bsignal\({_SIGCHLD}, (?!SIG_DFL\b|SIG_IGN\b|0\b|0x1\b)")
_EXITED = re.compile(rf"^--- SIGCHLD \{{si_signo={_SIGCHLD}, si_code=(?:CLD_(?:EXITED|KILLED|DUMPED)"
                     r"|0x[123](?: /\* CLD_(?:EXITED|KILLED|DUMPED) \*/)?), si_pid=(\d+),")
# wait4 and waitpid return the pid they reaped; waitid (without WNOWAIT) names it in its siginfo.
_WAIT_RETURNS = re.compile(r"^(?:wait4|waitpid)\(.*\) = (\d+)$")
_WAITID_REAPS = re.compile(r"^waitid\((?!.*\bWNOWAIT\b).*\bsi_pid=(\d+)\b.*\) = 0$")
_INTERRUPTED = re.compile(r"^([a-z_0-9]+\([^,)]*)[,)].* = \? ERESTARTSYS "
                          r"\(To be restarted if SA_RESTART is set\)$")


def handles_sigchld(text: str) -> bool:
    """Whether any process of the trace installs a SIGCHLD handler."""
    return _HANDLER.search(text) is not None


def _reaper(bodies: list[str], pid: str) -> int | None:
    """The index of the wait that reaps `pid`, if the process has one."""
    for index, body in enumerate(bodies):
        match = _WAIT_RETURNS.match(body) or _WAITID_REAPS.match(body)
        if match is not None and match.group(1) == pid:
            return index
    return None


def _made_again(bodies: list[str], interrupted: int, signal: int) -> bool:
    """bodies[interrupted] ended with ERESTARTSYS, the SIGCHLD at `signal` follows it, and the
    line after the signal is the same call (same name, same first argument) made again."""
    match = _INTERRUPTED.match(bodies[interrupted]) if interrupted >= 0 else None
    if match is None or signal + 1 >= len(bodies):
        return False
    head = match.group(1)
    again = bodies[signal + 1]
    return again.startswith(head) and again[len(head):len(head) + 1] in (",", ")")


def ordered(bodies: list[str]) -> list[str]:
    """One process's lines (raw pids), each exited child's SIGCHLD right before its reaping
    wait and the calls it interrupted once only (module docstring)."""
    moved: dict[int, int] = {}                  # the SIGCHLD's index -> its reaper's
    for index, body in enumerate(bodies):
        match = _EXITED.match(body)
        if match is not None:
            reaper = _reaper(bodies, match.group(1))
            if reaper is not None:
                moved[index] = reaper
    dropped = {index - 1 for index in moved if _made_again(bodies, index - 1, index)}
    before = {reaper: bodies[index] for index, reaper in moved.items()}
    result = []
    for index, body in enumerate(bodies):
        if index in moved or index in dropped:
            continue
        if index in before:
            result.append(before[index])
        result.append(body)
    return result
