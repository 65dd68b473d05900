"""The i386 ABI's original signal calls, before the rt_ family: sigaction, sigprocmask,
sigpending, sigsuspend, signal, sgetmask and ssetmask (kernel/signal.c under CONFIG_OLD_SIGACTION,
CONFIG_OLD_SIGSUSPEND3 and CONFIG_SGETMASK_SYSCALL; arch/x86/entry/syscalls/syscall_32.tbl).

Their sets are an `old_sigset_t`, one 32-bit word: the low word of the thread's 64-bit mask. A
call that sets a whole mask from one (sigsuspend, ssetmask, sigaction's sa_mask: siginitset)
clears the real-time signals above it; sigprocmask's SIG_SETMASK replaces only the low word
(`new_blocked.sig[0] = new_set`). glibc's static i386 programs do not call them; old binaries
and LTP's getcontext01, sigprocmask and signal tests do. x86-64 has none of these numbers."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...signals import NSIG, SIGKILL, SIGSTOP
from ..kinds import K
from ..registry import syscall
from .signals import SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK, UNBLOCKABLE

LOW_WORD = 0xFFFFFFFF
SA_NODEFER, SA_RESETHAND = 0x40000000, 0x80000000   # SA_NOMASK, SA_ONESHOT
OLD_SIGACTION = struct.Struct("<IIII")                # handler, sa_mask, sa_flags, restorer


def _set_blocked(thread, mask: int) -> None:
    """set_current_blocked: SIGKILL and SIGSTOP can never be blocked."""
    thread.sigmask = mask & ~UNBLOCKABLE


@syscall("sigprocmask", args=(("how", K.SIGMASK_HOW), ("set", K.PTR), ("oldset", K.PTR)))
def sys_sigprocmask(ctx, how, set_ptr, oldset):
    thread = ctx.thread
    old = thread.sigmask & LOW_WORD
    if set_ptr:
        new = struct.unpack("<I", ctx.read(set_ptr, 4))[0]
        if how == SIG_BLOCK:
            _set_blocked(thread, thread.sigmask | new)
        elif how == SIG_UNBLOCK:
            _set_blocked(thread, thread.sigmask & ~new)
        elif how == SIG_SETMASK:
            _set_blocked(thread, (thread.sigmask & ~LOW_WORD) | new)
        else:
            raise GuestErrno(E.EINVAL)
    if oldset:
        ctx.write(oldset, struct.pack("<I", old))
    return 0


@syscall("sigpending", args=(("set", K.PTR),))
def sys_sigpending(ctx, set_ptr):
    """do_sigpending: the blocked signals pending for the thread or its process."""
    pending = (ctx.thread.pending_signals | ctx.proc.pending_signals) & ctx.thread.sigmask
    ctx.write(set_ptr, struct.pack("<I", pending & LOW_WORD))
    return 0


@syscall("sigsuspend", args=(("unused1", K.INT), ("unused2", K.INT), ("mask", K.HEX)))
def sys_sigsuspend(ctx, _unused1, _unused2, mask):
    """The i386 form passes the mask by value (CONFIG_OLD_SIGSUSPEND3); it then sleeps as
    rt_sigsuspend does, its restart and return handled by signal delivery."""
    thread = ctx.thread
    if thread.saved_sigmask is None:
        thread.saved_sigmask = thread.sigmask
        _set_blocked(thread, mask & LOW_WORD)
    raise WouldBlock(("signal", thread.tid), "sigsuspend")


def _check_signal(sig: int, changing: bool) -> None:
    """do_sigaction: a valid number, and never a new action for SIGKILL or SIGSTOP."""
    if not 1 <= sig <= NSIG or (changing and sig in (SIGKILL, SIGSTOP)):
        raise GuestErrno(E.EINVAL)


@syscall("sigaction", args=(("signum", K.SIGNAL), ("act", K.PTR), ("oldact", K.PTR)))
def sys_sigaction(ctx, sig, act, oldact):
    """struct old_sigaction {handler, sa_mask, sa_flags, sa_restorer}: all of it is read before
    the action changes, the old one written after (kernel/signal.c SYSCALL_DEFINE3(sigaction))."""
    _check_signal(sig, bool(act))
    old = ctx.proc.sigactions.get(sig, (0, 0, 0, 0))
    if act:
        handler, mask, flags, restorer = OLD_SIGACTION.unpack(ctx.read(act, OLD_SIGACTION.size))
        ctx.proc.sigactions[sig] = (handler, flags, restorer, mask)
    if oldact:
        handler, flags, restorer, mask = old
        ctx.write(oldact, OLD_SIGACTION.pack(handler, mask & LOW_WORD, flags, restorer))
    return 0


@syscall("signal", args=(("signum", K.SIGNAL), ("handler", K.PTR)))
def sys_signal(ctx, sig, handler):
    """SysV semantics: the handler runs once (SA_ONESHOT) and without its own signal blocked
    (SA_NOMASK); the old handler is the return value."""
    _check_signal(sig, True)
    old = ctx.proc.sigactions.get(sig, (0, 0, 0, 0))
    ctx.proc.sigactions[sig] = (handler, SA_RESETHAND | SA_NODEFER, 0, 0)
    return old[0]


@syscall("sgetmask", args=())
def sys_sgetmask(ctx):
    return ctx.thread.sigmask & LOW_WORD


@syscall("ssetmask", args=(("newmask", K.HEX),))
def sys_ssetmask(ctx, newmask):
    """siginitset: the new mask is the word alone, the real-time signals above it unblocked."""
    old = ctx.thread.sigmask & LOW_WORD
    _set_blocked(ctx.thread, newmask & LOW_WORD)
    return old
