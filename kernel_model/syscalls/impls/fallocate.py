"""fallocate(2): reserve or punch out a range of a regular file (fs/open.c vfs_fallocate).

The rootfs is an overlay whose upper layer is memory (statfs.py), so a file's fallocate is
tmpfs's (ovl_fallocate hands it to the upper file; mm/shmem.c shmem_fallocate): it allocates
(mode 0, growing the size to offset+len), reserves without growing (FALLOC_FL_KEEP_SIZE: the
model has no blocks to reserve, so nothing shows) and punches holes (PUNCH_HOLE|KEEP_SIZE:
the range reads as zeros); every other mode is EOPNOTSUPP. The checks are vfs_fallocate's, in
its order, after the descriptor's lookup (EBADF).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_ACCMODE, O_PATH, O_RDWR, O_WRONLY, S_IFDIR, S_IFIFO, S_IFMT, S_IFREG
from ..kinds import K
from ..registry import syscall
from ...file_size_limit import check_new_size

KEEP_SIZE, PUNCH_HOLE, NO_HIDE_STALE, COLLAPSE_RANGE = 0x01, 0x02, 0x04, 0x08
ZERO_RANGE, INSERT_RANGE, UNSHARE_RANGE, WRITE_ZEROES = 0x10, 0x20, 0x40, 0x80
# include/linux/falloc.h FALLOC_FL_MODE_MASK: the operations, one at a time
MODE_MASK = PUNCH_HOLE | COLLAPSE_RANGE | ZERO_RANGE | INSERT_RANGE | UNSHARE_RANGE | WRITE_ZEROES
SHMEM_MODES = KEEP_SIZE | PUNCH_HOLE            # shmem_fallocate()'s only accepted bits
MAX_LFS_FILESIZE = (1 << 63) - 1                # s_maxbytes of tmpfs on a 64-bit kernel


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _check_mode(mode: int) -> None:
    """vfs_fallocate's mode checks: unknown bits, a hole punched without KEEP_SIZE, or a
    size-changing operation with KEEP_SIZE are EOPNOTSUPP."""
    if mode & ~(MODE_MASK | KEEP_SIZE):
        raise GuestErrno(E.EOPNOTSUPP)
    operation = mode & MODE_MASK
    if operation == PUNCH_HOLE and not mode & KEEP_SIZE:
        raise GuestErrno(E.EOPNOTSUPP)
    if operation in (COLLAPSE_RANGE, INSERT_RANGE, WRITE_ZEROES) and mode & KEEP_SIZE:
        raise GuestErrno(E.EOPNOTSUPP)
    if operation not in (0, PUNCH_HOLE, COLLAPSE_RANGE, ZERO_RANGE, INSERT_RANGE,
                         UNSHARE_RANGE, WRITE_ZEROES):
        raise GuestErrno(E.EOPNOTSUPP)          # two operations at once


def _check_file(f) -> None:
    """vfs_fallocate's checks of the file: opened for writing (EBADF), then its type."""
    if f.flags & O_PATH or f.flags & O_ACCMODE not in (O_WRONLY, O_RDWR):
        raise GuestErrno(E.EBADF)
    kind = f.stat().mode & S_IFMT
    if kind == S_IFIFO:
        raise GuestErrno(E.ESPIPE)
    if kind == S_IFDIR:
        raise GuestErrno(E.EISDIR)
    if kind != S_IFREG:
        raise GuestErrno(E.ENODEV)


def fallocate(f, mode: int, offset: int, length: int,
              size_ok=lambda current, new: None) -> None:
    """`size_ok(current, new size)`: the caller's RLIMIT_FSIZE check, made where
    shmem_fallocate makes inode_newsize_ok (a size the call would grow the file to)."""
    if offset < 0 or length <= 0:
        raise GuestErrno(E.EINVAL)
    _check_mode(mode)
    _check_file(f)
    if offset + length > MAX_LFS_FILESIZE:
        raise GuestErrno(E.EFBIG)               # (the sum of two int64s overflowing included)
    allocate = getattr(f, "allocate", None)
    if allocate is None or mode & ~SHMEM_MODES:
        raise GuestErrno(E.EOPNOTSUPP)          # no f_op->fallocate, or not one of tmpfs's
    if not mode & (KEEP_SIZE | PUNCH_HOLE):
        size_ok(f.stat().size, offset + length)
    allocate(offset, length, keep_size=bool(mode & KEEP_SIZE), punch=bool(mode & PUNCH_HOLE))


@syscall("fallocate", args=(("fd", K.FD), ("mode", K.INT), ("offset", K.LONG), ("len", K.LONG)),
         i386=(("fd", K.FD), ("mode", K.INT), ("offset", K.OFFSET64_SPLIT),
               ("len", K.OFFSET64_SPLIT)))
def sys_fallocate(ctx, fd, mode, a, b, c, d):
    f = ctx.proc.fds.get(ctx.int32(fd))
    if ctx.abi == "i386":          # compat: each loff_t in two words, low first
        offset, length = _signed64(a | b << 32), _signed64(c | d << 32)
    else:
        offset, length = _signed64(a), _signed64(b)
    fallocate(f, ctx.int32(mode) & 0xFFFFFFFF, offset, length,
              lambda current, new: check_new_size(ctx, current, new))
    return 0
