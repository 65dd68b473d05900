"""posix_fadvise: fadvise64 and i386's fadvise64_64 (mm/fadvise.c, arch/x86/kernel/sys_ia32.c).

The advice changes no result a guest can see (the model has no page cache), so after Linux's
checks the call succeeds: EBADF for a closed fd, ESPIPE for a pipe or FIFO, EINVAL for a
negative length or an unknown advice (generic_fadvise).

Argument layouts: x86-64 fadvise64(fd, loff_t offset, size_t len, int advice); i386 passes
64-bit values as two 32-bit halves, low first — fadvise64(fd, offset_lo, offset_hi, size_t
len, advice) and fadvise64_64(fd, offset_lo, offset_hi, len_lo, len_hi, advice)
(ia32_fadvise64, ia32_fadvise64_64).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import S_IFIFO, S_IFMT
from ..kinds import K
from ..registry import syscall

POSIX_FADV_NOREUSE = 5            # advice 0..5: NORMAL RANDOM SEQUENTIAL WILLNEED DONTNEED NOREUSE


def _signed64(value: int) -> int:
    value &= 2**64 - 1
    return value - 2**64 if value >> 63 else value


def fadvise(ctx, fd: int, offset: int, length: int, advice: int) -> int:
    """ksys_fadvise64_64(): `length` is a loff_t (signed 64-bit), `advice` a C int."""
    f = ctx.proc.fds.get(ctx.int32(fd))
    if f.stat().mode & S_IFMT == S_IFIFO:
        raise GuestErrno(E.ESPIPE)
    if _signed64(length) < 0:
        raise GuestErrno(E.EINVAL)
    if not 0 <= ctx.int32(advice) <= POSIX_FADV_NOREUSE:
        raise GuestErrno(E.EINVAL)
    return 0


@syscall("fadvise64")
def sys_fadvise64(ctx, fd, a1, a2, a3, a4):
    if ctx.abi == "x86_64":                        # (fd, offset, len, advice)
        return fadvise(ctx, fd, a1, a2, a3)
    return fadvise(ctx, fd, a1 | a2 << 32, a3, a4)   # (fd, lo, hi, u32 len, advice)


@syscall("fadvise64_64", args=(("fd", K.FD), ("offset_low", K.ULONG), ("offset_high", K.ULONG),
                               ("len_low", K.ULONG), ("len_high", K.ULONG), ("advice", K.INT)))
def sys_fadvise64_64(ctx, fd, offset_lo, offset_hi, len_lo, len_hi, advice):
    return fadvise(ctx, fd, offset_lo | offset_hi << 32, len_lo | len_hi << 32, advice)
