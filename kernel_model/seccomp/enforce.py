"""What a call of a task in seccomp mode meets before it runs (kernel/seccomp.c __secure_computing).

Strict mode (__secure_computing_strict) lets through read, write, exit and the ABI's sigreturn
(rt_sigreturn for x86-64; sigreturn for i386, the compat table's __NR_seccomp_sigreturn_32);
any other call ends the thread with do_exit(SIGKILL) — the process, when it was the last one.

Filter mode runs every filter of the task on the call's struct seccomp_data; the verdict is the
action that sorts lowest as a signed 32-bit number, the newest filter's on a tie
(seccomp_run_filters' ACTION_ONLY), its low 16 bits the action's data (__seccomp_filter):
  ALLOW, LOG   the call runs
  ERRNO        the call is skipped and returns -data (at most MAX_ERRNO)
  TRACE        no tracer asked for PTRACE_EVENT_SECCOMP here: skipped, -ENOSYS
  TRAP         skipped; a SIGSYS forced on the thread (blocked or ignored: unblocked, default) with
               si_code SYS_SECCOMP, si_errno the data, the call's address, number and arch; the
               result register holds the call number again (syscall_rollback)
  KILL_THREAD  the thread ends; the last thread's process dies of SIGSYS with a core dump
  KILL_PROCESS (and any unknown action) the process dies of SIGSYS with a core dump
"""
import struct

from ..signals.numbers import SIGKILL, SIGSYS
from .cbpf import run
from .data import AUDIT_ARCH, seccomp_data
from .install import SECCOMP_MODE_STRICT

STRICT_CALLS = {"x86_64": frozenset({"read", "write", "exit", "rt_sigreturn"}),
                "i386": frozenset({"read", "write", "exit", "sigreturn"})}
RET_KILL_PROCESS, RET_KILL_THREAD, RET_TRAP, RET_ERRNO = 0x8000_0000, 0, 0x0003_0000, 0x0005_0000
RET_USER_NOTIF, RET_TRACE, RET_LOG, RET_ALLOW = 0x7FC0_0000, 0x7FF0_0000, 0x7FFC_0000, 0x7FFF_0000
ACTION_FULL, DATA = 0xFFFF_0000, 0xFFFF
MAX_ERRNO, ENOSYS, SYS_SECCOMP = 4095, 38, 1
SIG_DFL, SIG_IGN = 0, 1
KILLED = object()          # the calling thread is gone: nothing to return to


def _signed(action: int) -> int:
    return action - (1 << 32) if action & 0x8000_0000 else action


def verdict(filters, data: bytes) -> int:
    """The filters' combined return value for one call (seccomp_run_filters)."""
    best = None
    for f in filters:                                   # newest first
        ret = run(f.program, data)
        if best is None or _signed(ret & ACTION_FULL) < _signed(best & ACTION_FULL):
            best = ret
    return best


def _end_thread(kernel, thread, sig: int) -> object:
    """do_exit(sig) for one of several threads; for the last one its process dies of sig
    (SIGSYS with a core dump, as force_sig_seccomp's coredump)."""
    if len(thread.process.live_threads()) > 1:
        kernel.exit_thread(thread, 0)
    else:
        kernel.kill(thread.process, sig, core=sig == SIGSYS)
    return KILLED


def _sigsys_info(bits: int, abi: str, nr: int, ip: int, errno: int) -> bytes:
    """siginfo_t's _sigsys: si_call_addr, si_syscall, si_arch after the 3 ints (and the
    64-bit union's padding)."""
    head = struct.pack("<iii", SIGSYS, errno, SYS_SECCOMP)
    body = struct.pack("<4xQiI", ip, nr, AUDIT_ARCH[abi]) if bits == 64 else \
        struct.pack("<IiI", ip & 0xFFFF_FFFF, nr, AUDIT_ARCH[abi])
    return (head + body).ljust(128, b"\0")


def _trap(kernel, thread, abi: str, nr: int, ip: int, errno: int) -> int:
    """force_sig_seccomp(..., false): an ignored or blocked SIGSYS cannot hide the call."""
    proc = thread.process
    action = proc.sigactions.get(SIGSYS, (SIG_DFL, 0, 0, 0))
    if action[0] == SIG_IGN or thread.sigmask & 1 << (SIGSYS - 1):
        # force_sig_info_to_task: blocked or ignored, it is unblocked with the default action
        proc.sigactions[SIGSYS] = (SIG_DFL, *action[1:])
        thread.sigmask &= ~(1 << (SIGSYS - 1))
    info = _sigsys_info(proc.machine.arch.bits, abi, nr, ip, errno)
    kernel.signals.post(proc, SIGSYS, thread=thread, info={"raw": info, "code": SYS_SECCOMP})
    return nr


def check(kernel, thread, abi: str, name: str, nr: int, ip: int, fetch_args):
    """None: the call runs; else the result it returns without running (an int) or KILLED.
    `fetch_args()` gives its six argument registers (read only in filter mode)."""
    flags = thread.task_flags
    if flags.seccomp_mode == SECCOMP_MODE_STRICT:
        return None if name in STRICT_CALLS[abi] else _end_thread(kernel, thread, SIGKILL)
    ret = verdict(flags.seccomp_filters, seccomp_data(abi, nr, ip, fetch_args()))
    action, data = ret & ACTION_FULL, ret & DATA
    if action in (RET_ALLOW, RET_LOG):
        return None
    if action == RET_ERRNO:
        return -min(data, MAX_ERRNO)
    if action in (RET_TRACE, RET_USER_NOTIF):
        return -ENOSYS
    if action == RET_TRAP:
        return _trap(kernel, thread, abi, nr, ip, data)
    if action == RET_KILL_THREAD:
        return _end_thread(kernel, thread, SIGSYS)
    kernel.kill(thread.process, SIGSYS, core=True)
    return KILLED
