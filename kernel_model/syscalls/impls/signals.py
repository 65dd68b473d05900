"""Signal dispositions, masks, sigreturn, pause/sigsuspend and the ITIMER_REAL/alarm timer
(delivery itself: kernel_model/signals/delivery.py)."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...signals import NSIG, SIGKILL, SIGSTOP
from ..kinds import K
from ...time.itimer import ITIMER_REAL, SIGNAL_OF, timers_of
from ..registry import NO_RETURN, syscall

SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK = 0, 1, 2
UNBLOCKABLE = (1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1))


@syscall("rt_sigaction", args=(("signum", K.SIGNAL), ("act", K.SIGACTION_IN),
                               ("oldact", K.SIGACTION_OUT), ("sigsetsize", K.ULONG)))
def sys_rt_sigaction(ctx, sig, act, oldact, sigsetsize):
    if sigsetsize != 8 or not 1 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)
    # struct kernel_sigaction: handler, flags, restorer, mask (words, then an 8-byte mask)
    fmt = "<III" if ctx.word == 4 else "<QQQ"
    size = struct.calcsize(fmt) + 8
    old = ctx.proc.sigactions.get(sig, (0, 0, 0, 0))
    if act:
        handler, flags, restorer = struct.unpack(fmt, ctx.read(act, size - 8))
        mask = struct.unpack("<Q", ctx.read(act + size - 8, 8))[0]
        if sig in (SIGKILL, SIGSTOP):
            raise GuestErrno(E.EINVAL)
        new = (handler, flags, restorer, mask)
    if oldact:
        ctx.write(oldact, struct.pack(fmt, *old[:3]) + struct.pack("<Q", old[3]))
    if act:
        ctx.proc.sigactions[sig] = new
    return 0


@syscall("rt_sigprocmask", args=(("how", K.SIGMASK_HOW), ("set", K.SIGSET_IN),
                                 ("oldset", K.SIGSET_OUT), ("sigsetsize", K.ULONG)))
def sys_rt_sigprocmask(ctx, how, set_ptr, oldset, sigsetsize):
    if sigsetsize != 8:
        raise GuestErrno(E.EINVAL)
    thread = ctx.thread
    old = thread.sigmask
    if set_ptr:
        new = struct.unpack("<Q", ctx.read(set_ptr, 8))[0]
        if how == SIG_BLOCK:
            mask = old | new
        elif how == SIG_UNBLOCK:
            mask = old & ~new
        elif how == SIG_SETMASK:
            mask = new
        else:
            raise GuestErrno(E.EINVAL)
        thread.sigmask = mask & ~UNBLOCKABLE
    if oldset:
        ctx.write(oldset, struct.pack("<Q", old))
    return 0


SS_ONSTACK, SS_DISABLE, SS_AUTODISARM = 1, 2, 1 << 31
MINSIGSTKSZ = 2048                 # arch/x86/include/uapi/asm/signal.h


@syscall("sigaltstack", args=(("ss", K.STRUCT), ("old_ss", K.STRUCT)))
def sys_sigaltstack(ctx, ss, old_ss):
    """do_sigaltstack (kernel/signal.c): the new stack is read and checked first (EPERM while
    running on the current one, EINVAL for another mode, ENOMEM under MINSIGSTKSZ), the old
    one written after, its flags saying SS_ONSTACK or SS_DISABLE as they are now."""
    thread = ctx.thread
    sp, flags, size = thread.sigaltstack
    on_stack = size and sp <= ctx.proc.machine.sp - 1 < sp + size
    old = (sp, (SS_ONSTACK if on_stack else 0) | (flags & SS_AUTODISARM) if size else SS_DISABLE, size)
    if ss:
        fmt = "<III" if ctx.word == 4 else "<QI4xQ"        # (ss_flags taken unsigned)
        new_sp, new_flags, new_size = struct.unpack(fmt, ctx.read(ss, struct.calcsize(fmt)))
        if on_stack:
            raise GuestErrno(E.EPERM)
        mode = new_flags & ~SS_AUTODISARM
        if mode not in (0, SS_ONSTACK, SS_DISABLE):
            raise GuestErrno(E.EINVAL)
        if mode == SS_DISABLE:
            new_sp, new_size = 0, 0
        elif new_size < MINSIGSTKSZ:
            raise GuestErrno(E.ENOMEM)
        thread.sigaltstack = (new_sp, new_flags & SS_AUTODISARM if mode != SS_DISABLE else SS_DISABLE,
                              new_size)
    if old_ss:
        raw = struct.pack("<III", *old) if ctx.word == 4 else struct.pack("<QI4xQ", *old)
        ctx.write(old_ss, raw)
    return 0


@syscall("rt_sigreturn", args=(), outside_hook=True)
def sys_rt_sigreturn(ctx):
    ctx.kernel.signals.sigreturn(ctx, rt=True)
    return NO_RETURN


@syscall("sigreturn", args=(), outside_hook=True)
def sys_sigreturn(ctx):
    ctx.kernel.signals.sigreturn(ctx, rt=False)
    return NO_RETURN


@syscall("rt_sigpending")
def sys_rt_sigpending(ctx, set_ptr, sigsetsize):
    if sigsetsize > 8:
        raise GuestErrno(E.EINVAL)
    pending = (ctx.thread.pending_signals | ctx.proc.pending_signals) & ctx.thread.sigmask
    ctx.write(set_ptr, struct.pack("<Q", pending)[:sigsetsize])
    return 0


@syscall("pause")
def sys_pause(ctx):
    # Sleeps until a signal is delivered; the delivery makes it return -EINTR (signal.py).
    raise WouldBlock(("signal", ctx.thread.tid), "pause")


@syscall("rt_sigsuspend")
def sys_rt_sigsuspend(ctx, mask_ptr, sigsetsize):
    if sigsetsize != 8:
        raise GuestErrno(E.EINVAL)
    if ctx.thread.saved_sigmask is None:
        ctx.thread.saved_sigmask = ctx.thread.sigmask
        ctx.thread.sigmask = struct.unpack("<Q", ctx.read(mask_ptr, 8))[0] & ~UNBLOCKABLE
    raise WouldBlock(("signal", ctx.thread.tid), "sigsuspend")


NS, US = 10**9, 1000


def _timeval(ctx, addr: int) -> int:
    fmt = "<ii" if ctx.word == 4 else "<qq"
    sec, usec = struct.unpack(fmt, ctx.read(addr, struct.calcsize(fmt)))
    if sec < 0 or not 0 <= usec < 10**6:
        raise GuestErrno(E.EINVAL)
    return sec * NS + usec * US


KTIME_MAX = (1 << 63) - 1      # Linux keeps timers as ktime_t: longer ones saturate (ktime.h)


def _pack_timeval(ctx, ns: int) -> bytes:
    """A struct timeval of `ns`. On i386 tv_sec is a compat_long_t: Linux truncates the 64-bit
    seconds to 32 bits when it copies them out (put_old_itimerval32, kernel/time/itimer.c), so
    alarm(0xffffffff) reads back as -1 seconds, as it does natively."""
    sec, usec = divmod(min(ns, KTIME_MAX) // US, 10**6)
    if ctx.word == 4:
        return struct.pack("<Ii", sec & 0xFFFFFFFF, usec)
    return struct.pack("<qq", sec, usec)


def _itimer_now(ctx, which: int = ITIMER_REAL) -> tuple[int, int]:
    timer = timers_of(ctx.proc).get(which)
    if timer is None:
        return 0, 0
    deadline, interval = timer
    return max(0, deadline - ctx.kernel.clock.monotonic_ns()), interval


def _which(ctx, which: int) -> int:
    which = ctx.int32(which)
    if which not in SIGNAL_OF:
        raise GuestErrno(E.EINVAL)
    return which


@syscall("setitimer", args=(("which", K.INT), ("new_value", K.STRUCT), ("old_value", K.STRUCT)))
def sys_setitimer(ctx, which, new, old):
    """sys_setitimer's order (kernel/time/itimer.c): the new value is read (EFAULT), `which`
    checked (EINVAL), the timer set, and only then the old value written: a bad old_value is
    EFAULT with the new timer armed all the same."""
    interval = value = 0
    if new:
        word = 2 * (4 if ctx.word == 4 else 8)
        interval, value = _timeval(ctx, new), _timeval(ctx, new + word)
    which = _which(ctx, which)
    previous = _itimer_now(ctx, which)
    if which == ITIMER_REAL:
        ctx.kernel.arm_itimer(ctx.proc, value, interval)
    elif value:
        ctx.proc.itimer_cpu[which] = (ctx.kernel.clock.monotonic_ns() + value, interval)
        ctx.kernel.timer_armed()
    else:
        ctx.proc.itimer_cpu.pop(which, None)
    if old:
        ctx.write(old, _pack_timeval(ctx, previous[1]) + _pack_timeval(ctx, previous[0]))
    return 0


@syscall("getitimer", args=(("which", K.INT), ("curr_value", K.STRUCT)))
def sys_getitimer(ctx, which, cur):
    value, interval = _itimer_now(ctx, _which(ctx, which))
    ctx.write(cur, _pack_timeval(ctx, interval) + _pack_timeval(ctx, value))
    return 0


@syscall("alarm", args=(("seconds", K.UINT),))
def sys_alarm(ctx, seconds):
    """alarm_setitimer (kernel/time/itimer.c): `seconds` is an unsigned int; the old value is
    rounded up only from half a second (or when under one), and returned as an unsigned int."""
    value, _ = _itimer_now(ctx)
    ctx.kernel.arm_itimer(ctx.proc, (seconds & 0xFFFFFFFF) * NS, 0)
    sec, nsec = divmod(min(value, KTIME_MAX), NS)
    if (not sec and nsec) or nsec >= NS // 2:
        sec += 1
    return sec & 0xFFFFFFFF
