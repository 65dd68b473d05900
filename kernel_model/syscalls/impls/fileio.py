"""Calls on open file descriptions: read/write and friends, seek, dup, fcntl, ioctl."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import (F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, F_NOTIFY, F_SETFD, F_SETFL,
                      FASYNC, FD_CLOEXEC, FIOCLEX, FIONBIO, FIONCLEX, FIONREAD, O_ACCMODE,
                      O_APPEND, O_DIRECT, O_NOATIME, O_NONBLOCK, O_PATH, O_RDWR, O_WRONLY,
                      SEEK_CUR, SEEK_MAX)
from ...fs.devfs import UserfaultfdDevice
from ...landlock.hooks import check_file_truncate
from ...fs.fasync import set_fasync
from ...notify.dnotify import set_dnotify
from ...fs.unseekable import Unseekable
from ...fs.pipe_size import F_GETPIPE_SZ, F_SETPIPE_SZ, pipe_fcntl
from ...creds import CAP_SYS_RESOURCE
from ...file_size_limit import RLIMIT_FSIZE, check_new_size, fit_write
from ...fs.inode_flags import check_ftruncate, check_setfl
from .inode_flags_ioctl import flags_ioctl
from .fown import OWNER_COMMANDS, owner_fcntl, sender
from .leases import F_GETLEASE, F_SETLEASE, lease_fcntl
from .memfd import F_ADD_SEALS, F_GET_SEALS, seal_fcntl
from .record_locks import COMMANDS as LOCK_COMMANDS, record_lock
from ...iovec import gather, import_iovec, read_into
from ..kinds import K
from ..registry import syscall

MAX_RW = 0x7FFFF000          # Linux MAX_RW_COUNT: larger transfers are truncated, not refused
SETFL_MASK = O_APPEND | O_NONBLOCK | FASYNC | O_DIRECT | O_NOATIME     # what F_SETFL may change


# An O_PATH description serves *at() calls and fstat only: Linux's fdget() does not even
# return it to read/write, so EBADF comes before any other check (a bad buffer's EFAULT).
def _readable(f) -> None:
    if (f.flags & O_ACCMODE) == O_WRONLY or f.flags & O_PATH:
        raise GuestErrno(E.EBADF)


def _writable(f) -> None:
    if (f.flags & O_ACCMODE) not in (O_WRONLY, O_RDWR) or f.flags & O_PATH:
        raise GuestErrno(E.EBADF)


# read and write are most of what a syscall-bound program calls (dd bs=1: nothing else), so
# they take the fd as `fd & FD_BITS` instead of ctx.int32(fd): the int's low 32 bits, as int32
# takes them, and a negative int becomes a number >= 2**31 that no table holds, so the lookup
# fails with EBADF exactly as it does for the negative fd.
FD_BITS = 0xFFFFFFFF


@syscall("read", args=(("fd", K.FD), ("buf", K.BUF_OUT), ("count", K.ULONG)))
def sys_read(ctx, fd, buf, count):
    f = ctx.proc.fds.get(fd & FD_BITS)
    flags = f.flags                        # _readable(f), spelled out on this path
    if (flags & O_ACCMODE) == O_WRONLY or flags & O_PATH:
        raise GuestErrno(E.EBADF)
    if count > MAX_RW:
        count = MAX_RW
    if count and not ctx.writable(buf, count):
        raise GuestErrno(E.EFAULT)         # checked first: a bad buffer consumes no data
    data = f.read(count)
    if data:
        ctx.mem.write(buf, data)           # ctx.store: writable() has just accepted it
    return len(data)


@syscall("write", args=(("fd", K.FD), ("buf", K.BUF_IN), ("count", K.ULONG)))
def sys_write(ctx, fd, buf, count):
    f = ctx.proc.fds.get(fd & FD_BITS)
    flags = f.flags                        # _writable(f), spelled out on this path
    if (flags & O_ACCMODE) not in (O_WRONLY, O_RDWR) or flags & O_PATH:
        raise GuestErrno(E.EBADF)
    data = ctx.read(buf, count if count < MAX_RW else MAX_RW)
    if RLIMIT_FSIZE in ctx.proc.rlimits:       # set by setrlimit: this path stays one test
        data = fit_write(ctx, f, data)
    return f.write(data)


@syscall("pread64", args=(("fd", K.FD), ("buf", K.BUF_OUT), ("count", K.ULONG), ("offset", K.LONG)),
         i386=(("fd", K.FD), ("buf", K.BUF_OUT), ("count", K.ULONG), ("offset", K.OFFSET64_SPLIT)))
def sys_pread64(ctx, fd, buf, count, off_lo, off_hi):
    offset = _offset64(ctx, off_lo, off_hi)
    f = positional(ctx, fd)
    _readable(f)
    data = f.pread(min(count, MAX_RW), offset)
    ctx.write(buf, data)
    return len(data)


@syscall("pwrite64", args=(("fd", K.FD), ("buf", K.BUF_IN), ("count", K.ULONG), ("offset", K.LONG)),
         i386=(("fd", K.FD), ("buf", K.BUF_IN), ("count", K.ULONG), ("offset", K.OFFSET64_SPLIT)))
def sys_pwrite64(ctx, fd, buf, count, off_lo, off_hi):
    offset = _offset64(ctx, off_lo, off_hi)
    f = positional(ctx, fd)
    _writable(f)
    return f.pwrite(fit_write(ctx, f, ctx.read(buf, min(count, MAX_RW)), offset), offset)


def positional(ctx, fd: int):
    """ksys_pread64/ksys_pwrite64, do_preadv/do_pwritev: the file of a call at a position;
    one with no position (a pipe, a socket, a terminal: no FMODE_PREAD/PWRITE) is ESPIPE
    before its access mode is looked at (EBADF for a closed or O_PATH fd first)."""
    f = ctx.proc.fds.get_usable(ctx.int32(fd))
    if isinstance(f, Unseekable):
        raise GuestErrno(E.ESPIPE)
    return f


def _offset64(ctx, lo: int, hi: int) -> int:
    """i386 passes 64-bit offsets in two registers (low word first); x86-64 in one."""
    offset = lo | (hi << 32) if ctx.abi == "i386" else lo
    offset = offset - (1 << 64) if offset >> 63 else offset
    if offset < 0:
        raise GuestErrno(E.EINVAL)
    return offset


@syscall("readv", args=(("fd", K.FD), ("iov", K.IOVEC_OUT), ("iovcnt", K.INT)))
def sys_readv(ctx, fd, iov, iovcnt):
    # fs/read_write.c vfs_readv: the file's mode is checked before the vector is imported
    f = ctx.proc.fds.get(ctx.int32(fd))
    _readable(f)
    return read_into(ctx, import_iovec(ctx, iov, iovcnt), f.read)


@syscall("writev", args=(("fd", K.FD), ("iov", K.IOVEC_IN), ("iovcnt", K.INT)))
def sys_writev(ctx, fd, iov, iovcnt):
    f = ctx.proc.fds.get(ctx.int32(fd))
    _writable(f)
    data, faulted = gather(ctx, import_iovec(ctx, iov, iovcnt))
    if not data:
        if faulted:
            raise GuestErrno(E.EFAULT)
        return 0
    return f.write(fit_write(ctx, f, data))


@syscall("lseek", args=(("fd", K.FD), ("offset", K.LONG), ("whence", K.WHENCE)))
def sys_lseek(ctx, fd, offset, whence):
    f = ctx.proc.fds.get(ctx.int32(fd))
    whence &= 0xFFFFFFFF             # unsigned int whence; SEEK_DATA and SEEK_HOLE are 3, 4
    if whence > SEEK_MAX:
        raise GuestErrno(E.EINVAL)
    result = f.seek(ctx.signed(offset), whence)
    f.dent_buffer = None             # rewinddir/seekdir restart the directory listing
    if result > ctx.mask >> 1:
        raise GuestErrno(E.EOVERFLOW)
    return result


@syscall("_llseek", args=(("fd", K.FD), ("offset_high", K.ULONG), ("offset_low", K.ULONG),
                          ("result", K.LOFF_OUT), ("whence", K.WHENCE)))
def sys_llseek(ctx, fd, offset_high, offset_low, result_ptr, whence):
    f = ctx.proc.fds.get(ctx.int32(fd))
    whence &= 0xFFFFFFFF             # unsigned int whence; SEEK_DATA and SEEK_HOLE are 3, 4
    if whence > SEEK_MAX:
        raise GuestErrno(E.EINVAL)
    offset = (offset_high << 32) | offset_low
    offset = offset - (1 << 64) if offset >> 63 else offset
    result = f.seek(offset, whence)
    f.dent_buffer = None
    ctx.write(result_ptr, struct.pack("<q", result))
    return 0


@syscall("close", args=(("fd", K.FD),))
def sys_close(ctx, fd):
    ctx.proc.fds.close(ctx.int32(fd))
    return 0


@syscall("dup", args=(("oldfd", K.FD),))
def sys_dup(ctx, fd):
    return ctx.proc.fds.install(ctx.proc.fds.get(ctx.int32(fd)))


@syscall("dup2", args=(("oldfd", K.FD), ("newfd", K.FD)))
def sys_dup2(ctx, oldfd, newfd):
    oldfd, newfd = ctx.int32(oldfd), ctx.int32(newfd)
    f = ctx.proc.fds.get(oldfd)
    if oldfd == newfd:
        return newfd
    return ctx.proc.fds.install(f, at=newfd)


@syscall("dup3", args=(("oldfd", K.FD), ("newfd", K.FD), ("flags", K.PIPE_FLAGS)))
def sys_dup3(ctx, oldfd, newfd, flags):
    oldfd, newfd = ctx.int32(oldfd), ctx.int32(newfd)
    if oldfd == newfd or flags & ~0o2000000:
        raise GuestErrno(E.EINVAL)
    return ctx.proc.fds.install(ctx.proc.fds.get(oldfd), at=newfd, cloexec=bool(flags & 0o2000000))


@syscall("fcntl", "fcntl64", args=(("fd", K.FD), ("cmd", K.FCNTL_CMD), ("arg", K.HEX)))
def sys_fcntl(ctx, fd, cmd, arg):
    fds = ctx.proc.fds
    fd = ctx.int32(fd)
    entry = fds.entry(fd)
    if cmd in (F_DUPFD, F_DUPFD_CLOEXEC):
        return fds.install(entry.file, minimum=ctx.int32(arg), cloexec=cmd == F_DUPFD_CLOEXEC)
    if cmd == F_GETFD:
        return FD_CLOEXEC if entry.cloexec else 0
    if cmd == F_SETFD:
        entry.cloexec = bool(arg & FD_CLOEXEC)
        return 0
    if cmd == F_GETFL:
        return entry.file.flags
    if cmd == F_SETFL:
        was_async = entry.file.flags & FASYNC
        check_setfl(entry.file, arg)
        entry.file.flags = (entry.file.flags & ~SETFL_MASK) | (arg & SETFL_MASK)
        if (entry.file.flags & FASYNC) != was_async:        # setfl: f_op->fasync
            set_fasync(entry.file, fd, bool(arg & FASYNC), sender(ctx.kernel))
        return 0
    if cmd in LOCK_COMMANDS:
        return record_lock(ctx, entry.file, cmd, arg)
    if cmd in OWNER_COMMANDS:
        return owner_fcntl(ctx, entry.file, cmd, arg)
    if cmd in (F_ADD_SEALS, F_GET_SEALS):
        return seal_fcntl(ctx, entry.file, cmd, arg)
    if cmd in (F_SETLEASE, F_GETLEASE):
        return lease_fcntl(ctx, entry.file, fd, cmd, arg)
    if cmd == F_NOTIFY:
        return set_dnotify(ctx.kernel.fs.notify, fds, fds.get_usable(fd), fd, arg, ctx.proc.pid,
                           sender(ctx.kernel))
    if cmd in (F_GETPIPE_SZ, F_SETPIPE_SZ):
        return pipe_fcntl(entry.file, cmd, arg, ctx.kernel.wakeup,
                          ctx.proc.creds.capable(CAP_SYS_RESOURCE),
                          ctx.kernel.fs.tunables.pipe_max_size)
    raise GuestErrno(E.EINVAL)


@syscall("ioctl", args=(("fd", K.FD), ("request", K.IOCTL_REQ), ("arg", K.HEX)))
def sys_ioctl(ctx, fd, request, arg):
    ctx.proc.fds.get_usable(ctx.int32(fd))          # fdget(): not an O_PATH description
    entry = ctx.proc.fds.entry(ctx.int32(fd))
    request &= 0xFFFFFFFF
    if request == FIOCLEX:
        entry.cloexec = True
        return 0
    if request == FIONCLEX:
        entry.cloexec = False
        return 0
    if request == FIONBIO:
        nonblock = ctx.read(arg, 4) != b"\0\0\0\0"
        entry.file.flags = entry.file.flags | O_NONBLOCK if nonblock else entry.file.flags & ~O_NONBLOCK
        return 0
    if request == FIONREAD and hasattr(entry.file, "available"):
        ctx.write(arg, struct.pack("<i", entry.file.available()))
        return 0
    node = getattr(entry.file, "node", None)
    if isinstance(node, UserfaultfdDevice):
        from .userfaultfd import device_ioctl
        return device_ioctl(ctx, request, arg)
    answered = flags_ioctl(ctx, node, request, arg)     # do_vfs_ioctl's, before the file's
    if answered is not None:
        return answered
    own = getattr(entry.file, "ioctl", None) or getattr(node, "ioctl", None)
    if own is not None:                 # a file's or device's own (f_op->unlocked_ioctl)
        return own(ctx, request, arg)
    # Terminal ioctls (TCGETS, TIOCGWINSZ, TIOCGPGRP...) on something that is not a terminal,
    # and every other request a regular file does not know: ENOTTY, as Linux's vfs_ioctl.
    raise GuestErrno(E.ENOTTY)


@syscall("syncfs")
def sys_syncfs(ctx, fd):
    """sync_filesystem of the fd's file system: any open file has one."""
    ctx.proc.fds.get_usable(ctx.int32(fd))
    return 0


@syscall("sync")
def sys_sync(ctx):
    return 0


@syscall("ftruncate", args=(("fd", K.FD), ("length", K.LONG)))
def sys_ftruncate(ctx, fd, length):
    length = ctx.signed(length)
    if length < 0:
        raise GuestErrno(E.EINVAL)          # do_sys_ftruncate: before the descriptor
    return _ftruncate(ctx, _truncatable(ctx.proc.fds.get(ctx.int32(fd))), length)


def _ftruncate(ctx, f, length: int) -> int:
    """The size limit is a regular file's (do_sys_ftruncate refuses the others with EINVAL
    first, which the file's truncate says)."""
    node = getattr(f, "node", None)
    if node is not None and node.is_regular:
        check_ftruncate(node.stat().iflags)
        check_file_truncate(f)              # security_file_truncate, before do_truncate's size
        check_new_size(ctx, f.stat().size, length)
    f.truncate(length)
    return 0


def _truncatable(f):
    """do_sys_ftruncate: an O_PATH description is no descriptor (EBADF); one not open for
    writing is EINVAL, like one that is not a regular file (the file's truncate says so)."""
    if f.flags & O_PATH:
        raise GuestErrno(E.EBADF)
    if (f.flags & O_ACCMODE) not in (O_WRONLY, O_RDWR):
        raise GuestErrno(E.EINVAL)
    return f


@syscall("ftruncate64", args=(("fd", K.FD), ("length_low", K.ULONG), ("length_high", K.ULONG)))
def sys_ftruncate64(ctx, fd, lo, hi):
    length = _offset64(ctx, lo, hi)
    return _ftruncate(ctx, _truncatable(ctx.proc.fds.get(ctx.int32(fd))), length)


@syscall("sendfile", "sendfile64", args=(("out_fd", K.FD), ("in_fd", K.FD), ("offset", K.INT_OUT),
                                         ("count", K.ULONG)))
def sys_sendfile(ctx, out_fd, in_fd, offset_ptr, count):
    src, dst = ctx.proc.fds.get(ctx.int32(in_fd)), ctx.proc.fds.get(ctx.int32(out_fd))
    _readable(src)
    _writable(dst)
    count = min(count, MAX_RW)
    if hasattr(dst, "splice_room"):
        # fs/read_write.c do_sendfile() -> fs/splice.c splice_file_to_pipe(): into a pipe, wait
        # for room first and read only what fits, so no source byte is read and then dropped.
        count = min(count, dst.splice_room())
    if not offset_ptr:
        _must_splice_read(src)
        return _send(src, dst, src.read(count), rewind=True)
    fmt = "<q" if ctx.word == 8 else "<i"
    off = struct.unpack(fmt, ctx.read(offset_ptr, struct.calcsize(fmt)))[0]
    data = src.pread(count, off)            # a pipe: ESPIPE first (do_sendfile: no FMODE_PREAD)
    _must_splice_read(src)
    sent = _send(src, dst, data, rewind=False)
    ctx.write(offset_ptr, struct.pack(fmt, off + sent))     # *offset advances by what was sent
    return sent


def _must_splice_read(src) -> None:
    """sendfile reads through the source's f_op->splice_read (fs/splice.c do_splice_read,
    reached from do_sendfile): pipes and /dev/null have none, and the call fails with EINVAL
    (busybox cat then falls back to read/write)."""
    node = getattr(src, "node", None)
    if not getattr(src, "splice_read", True) or not getattr(node, "splice_read", True):
        raise GuestErrno(E.EINVAL)


def _send(src, dst, data: bytes, rewind: bool) -> int:
    """Write what sendfile read; the source's file offset ends after the bytes the destination
    took (do_sendfile() advances it by the splice's result, never by what was read ahead)."""
    sent = dst.write(data) if data else 0
    if rewind and sent < len(data):
        src.seek(sent - len(data), SEEK_CUR)
    return sent
