"""The stat family and utimensat, with each ABI's structure layout.

Layouts (Linux arch/x86/include/uapi/asm/stat.h, include/uapi/linux/stat.h):
  x86-64 struct stat (144 bytes); i386 struct stat64 (96 bytes); i386 old struct stat (64
  bytes); struct statx (256 bytes, same on both ABIs).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from ...flags import AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_NOFOLLOW
from ...fs.constants import ROOTFS_DEV
from ...fs.mountinfo import mount_id_of


def mount_id(fs, dev: int, view) -> int:
    """The caller's namespace's id of the mount (fs/mount_points.py, once a namespace
    exists: the module is not imported before)."""
    if getattr(view, "mount_ns", None) is None and "initial_mount_ns" not in fs.__dict__:
        return mount_id_of(dev)
    from ...fs.mount_points import mount_id as namespace_mount_id
    return namespace_mount_id(fs, dev, view)
from ...fs.statx_attributes import statx_attributes
from .paths import base_dir, fs_view, global_view

STAT_X86_64 = struct.Struct("<QQQIIIIQqqqqQqQqQ24x")
STAT64_I386 = struct.Struct("<Q4xIIIIIQ4xqIQIIIIIIQ")
STAT_I386 = struct.Struct("<IIHHHHIIIIIIIIII8x")
STATX = struct.Struct("<IIQIIIHHQQQQ" + "qIi" * 4 + "IIII" + "Q" + "104x")
STATX_BASIC_STATS = 0x7FF
# Linux 5.8 on answers stx_mnt_id whatever was asked (fs/stat.c vfs_statx: result_mask |=
# STATX_MNT_ID): one mount here, the root's. strace shows the mask as STATX_BASIC_STATS|STATX_MNT_ID.
STATX_MNT_ID = 0x1000
STATX_MTIME_CTIME = 0x40 | 0x80          # STATX_MTIME | STATX_CTIME
STATX_BTIME = 0x800
# File systems with multigrain timestamps (Linux 6.13 on, fs/stat.c fill_mg_cmtime) report no
# mtime or ctime to a statx that asked for neither: ext4 and xfs, the rootfs's file systems on
# the reference host (measured: statx(..., STATX_MODE) of / answers without STATX_MTIME and
# STATX_CTIME there, devtmpfs and procfs with them).
MULTIGRAIN_DEVS = frozenset({ROOTFS_DEV})
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2


def _major(dev: int) -> int:
    return ((dev >> 8) & 0xFFF) | ((dev >> 32) & ~0xFFF)


def _minor(dev: int) -> int:
    return (dev & 0xFF) | ((dev >> 12) & ~0xFF)


def _split(ns: int) -> tuple[int, int]:
    return ns // 10**9, ns % 10**9


def pack_stat(abi: str, st) -> bytes:
    a, m, c = _split(st.atime_ns), _split(st.mtime_ns), _split(st.ctime_ns)
    if abi == "x86_64":
        return STAT_X86_64.pack(st.dev, st.ino, st.nlink, st.mode, st.uid, st.gid, 0, st.rdev,
                                st.size, st.blksize, st.blocks, *a, *m, *c)
    return STAT64_I386.pack(st.dev, st.ino & 0xFFFFFFFF, st.mode, st.nlink, st.uid, st.gid, st.rdev,
                            st.size, st.blksize, st.blocks, a[0] & 0xFFFFFFFF, a[1], m[0] & 0xFFFFFFFF,
                            m[1], c[0] & 0xFFFFFFFF, c[1], st.ino)


def pack_old_stat_i386(st) -> bytes:
    if st.ino > 0xFFFFFFFF or st.size > 0x7FFFFFFF:
        raise GuestErrno(E.EOVERFLOW)
    a, m, c = _split(st.atime_ns), _split(st.mtime_ns), _split(st.ctime_ns)
    return STAT_I386.pack(st.dev & 0xFFFF, st.ino, st.mode, min(st.nlink, 0xFFFF), st.uid & 0xFFFF,
                          st.gid & 0xFFFF, st.rdev & 0xFFFF, st.size, st.blksize, st.blocks,
                          a[0], a[1], m[0], m[1], c[0], c[1])


def statx_mask(st, request: int) -> int:
    """What a statx asking `request` learns: the basic stats and the mount id, the birth time
    when asked and kept (ext4_getattr and shmem_getattr fill it on request; procfs never), no
    mtime and ctime from a multigrain file system when neither was asked."""
    mask = STATX_BASIC_STATS | STATX_MNT_ID
    if request & STATX_BTIME and st.btime_ns is not None:
        mask |= STATX_BTIME
    if st.dev in MULTIGRAIN_DEVS and not request & STATX_MTIME_CTIME:
        mask &= ~STATX_MTIME_CTIME
    return mask


def pack_statx(st, request: int = STATX_BASIC_STATS, mount_id: int | None = None) -> bytes:
    """`mount_id`: the id of the file's mount in the caller's namespace (mountinfo.py's
    fixed ids without one)."""
    mask = statx_mask(st, request)
    a, m, c = _split(st.atime_ns), _split(st.mtime_ns), _split(st.ctime_ns)
    b = _split(st.btime_ns) if mask & STATX_BTIME else (0, 0)
    attributes, attributes_mask = statx_attributes(st)
    return STATX.pack(mask, st.blksize, attributes, st.nlink, st.uid, st.gid,
                      st.mode, 0, st.ino, st.size, st.blocks, attributes_mask,
                      a[0], a[1], 0, *b, 0, c[0], c[1], 0, m[0], m[1], 0,
                      _major(st.rdev), _minor(st.rdev), _major(st.dev), _minor(st.dev),
                      mount_id_of(st.dev) if mount_id is None else mount_id)


AT_NO_AUTOMOUNT, AT_STATX_SYNC_TYPE = 0x800, 0x6000
STATX__RESERVED = 0x80000000
STAT_FLAGS = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE


def stat_path(ctx, dirfd: int, pathname: int, flags: int):
    if flags & ~STAT_FLAGS:
        raise GuestErrno(E.EINVAL)              # vfs_statx: an unknown flag
    if flags & AT_EMPTY_PATH and pathname and ctx.read_cstr(pathname, 4095) == b"":
        return ctx.proc.fds.get(ctx.int32(dirfd)).stat()
    path = ctx.read_path(pathname)
    return ctx.kernel.fs.stat(path, base_dir(ctx, dirfd, path), fs_view(ctx),
                              follow=not flags & AT_SYMLINK_NOFOLLOW)


CWD = AT_FDCWD & 0xFFFFFFFF


@syscall("stat", args=(("pathname", K.PATH), ("statbuf", K.STAT)))
def sys_stat(ctx, pathname, buf):
    st = stat_path(ctx, CWD, pathname, 0)
    ctx.write(buf, pack_stat(ctx.abi, st) if ctx.abi == "x86_64" else pack_old_stat_i386(st))
    return 0


@syscall("lstat", args=(("pathname", K.PATH), ("statbuf", K.STAT)))
def sys_lstat(ctx, pathname, buf):
    st = stat_path(ctx, CWD, pathname, AT_SYMLINK_NOFOLLOW)
    ctx.write(buf, pack_stat(ctx.abi, st) if ctx.abi == "x86_64" else pack_old_stat_i386(st))
    return 0


@syscall("fstat", args=(("fd", K.FD), ("statbuf", K.STAT)))
def sys_fstat(ctx, fd, buf):
    st = ctx.proc.fds.get(ctx.int32(fd)).stat()
    ctx.write(buf, pack_stat(ctx.abi, st) if ctx.abi == "x86_64" else pack_old_stat_i386(st))
    return 0


@syscall("stat64", args=(("pathname", K.PATH), ("statbuf", K.STAT64)))
def sys_stat64(ctx, pathname, buf):
    ctx.write(buf, pack_stat("i386", stat_path(ctx, CWD, pathname, 0)))
    return 0


@syscall("lstat64", args=(("pathname", K.PATH), ("statbuf", K.STAT64)))
def sys_lstat64(ctx, pathname, buf):
    ctx.write(buf, pack_stat("i386", stat_path(ctx, CWD, pathname, AT_SYMLINK_NOFOLLOW)))
    return 0


@syscall("fstat64", args=(("fd", K.FD), ("statbuf", K.STAT64)))
def sys_fstat64(ctx, fd, buf):
    ctx.write(buf, pack_stat("i386", ctx.proc.fds.get(ctx.int32(fd)).stat()))
    return 0


@syscall("newfstatat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("statbuf", K.STAT),
                             ("flags", K.AT_FLAGS)))
@syscall("fstatat64", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("statbuf", K.STAT64),
                            ("flags", K.AT_FLAGS)))
def sys_newfstatat(ctx, dirfd, pathname, buf, flags):
    ctx.write(buf, pack_stat(ctx.abi, stat_path(ctx, dirfd, pathname, flags)))
    return 0


@syscall("statx", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("flags", K.AT_FLAGS),
                        ("mask", K.HEX), ("statxbuf", K.STRUCT)))
def sys_statx(ctx, dirfd, pathname, flags, mask, buf):
    """do_statx: a reserved mask bit, or both AT_STATX_FORCE_SYNC and DONT_SYNC, is EINVAL
    before the lookup."""
    if mask & STATX__RESERVED or flags & AT_STATX_SYNC_TYPE == AT_STATX_SYNC_TYPE:
        raise GuestErrno(E.EINVAL)
    st = stat_path(ctx, dirfd, pathname, flags)
    ctx.write(buf, pack_statx(st, mask, mount_id(ctx.kernel.fs, st.dev, fs_view(ctx))))
    return 0


def _utimens(ctx, dirfd, pathname, times, flags, time_words):
    now = ctx.kernel.clock.realtime_ns()
    stamps = [now, now]
    to_now = True                   # both times "now": a writer may set them (vfs_utimes)
    if times:
        fmt = "<ii" if time_words == 4 else "<qq"
        raw = ctx.read(times, 2 * struct.calcsize(fmt))
        for i in range(2):
            sec, nsec = struct.unpack_from(fmt, raw, i * struct.calcsize(fmt))
            to_now = to_now and nsec == UTIME_NOW
            if nsec == UTIME_OMIT:
                stamps[i] = None
            elif nsec != UTIME_NOW:
                if not 0 <= nsec < 10**9:
                    raise GuestErrno(E.EINVAL)
                stamps[i] = sec * 10**9 + nsec
    return _set_times(ctx, dirfd, pathname, stamps, to_now, flags)


def _set_times(ctx, dirfd, pathname, stamps: list, to_now: bool, flags: int) -> int:
    """do_utimes once the times are read: `stamps` (atime, mtime) in ns, None to keep one."""
    fs = ctx.kernel.fs
    if pathname == 0 and ctx.int32(dirfd) != AT_FDCWD:     # futimens(fd): utimensat(fd, NULL)
        # (do_utimes: a NULL name with AT_FDCWD is a path, EFAULT: LTP utimes01)
        f = ctx.proc.fds.get(ctx.int32(dirfd))
        fs.utimens(f.path, stamps[0], stamps[1], b"/", global_view(ctx), to_now=to_now)
        return 0
    path = ctx.read_path(pathname)
    fs.utimens(path, stamps[0], stamps[1], base_dir(ctx, dirfd, path), fs_view(ctx),
               follow=not flags & AT_SYMLINK_NOFOLLOW, to_now=to_now)
    return 0


@syscall("utimensat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("times", K.STRUCT),
                            ("flags", K.AT_FLAGS)))
def sys_utimensat(ctx, dirfd, pathname, times, flags):
    # i386's utimensat takes the old 32-bit struct timespec; utimensat_time64 the 64-bit one.
    return _utimens(ctx, dirfd, pathname, times, flags, ctx.word)


@syscall("futimesat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("times", K.STRUCT)))
def sys_futimesat(ctx, dirfd, pathname, times):
    """fs/utimes.c do_futimesat: struct timeval[2] of longs (NULL: now), microseconds in
    0..999999 (EINVAL)."""
    return _set_times(ctx, dirfd, pathname, *_timevals(ctx, times), 0)


@syscall("utimes", args=(("pathname", K.PATH), ("times", K.STRUCT)))
def sys_utimes(ctx, pathname, times):
    return _set_times(ctx, CWD, pathname, *_timevals(ctx, times), 0)


@syscall("utime", args=(("pathname", K.PATH), ("times", K.STRUCT)))
def sys_utime(ctx, pathname, times):
    """struct utimbuf {long actime, modtime;} in whole seconds (NULL: now)."""
    if not times:
        now = ctx.kernel.clock.realtime_ns()
        return _set_times(ctx, CWD, pathname, [now, now], True, 0)
    fmt = "<ii" if ctx.word == 4 else "<qq"
    actime, modtime = struct.unpack(fmt, ctx.read(times, struct.calcsize(fmt)))
    return _set_times(ctx, CWD, pathname, [actime * 10**9, modtime * 10**9], False, 0)


def _timevals(ctx, times) -> tuple[list, bool]:
    """(stamps, to_now) of a struct timeval[2] (NULL: both now, which a writer may set)."""
    now = ctx.kernel.clock.realtime_ns()
    if not times:
        return [now, now], True
    fmt = "<ii" if ctx.word == 4 else "<qq"
    size = struct.calcsize(fmt)
    raw = ctx.read(times, 2 * size)
    stamps = []
    for i in range(2):
        sec, usec = struct.unpack_from(fmt, raw, i * size)
        if not 0 <= usec < 10**6:
            raise GuestErrno(E.EINVAL)
        stamps.append(sec * 10**9 + usec * 1000)
    return stamps, False


@syscall("utimensat_time64", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("times", K.STRUCT),
                                   ("flags", K.AT_FLAGS)))
def sys_utimensat_time64(ctx, dirfd, pathname, times, flags):
    return _utimens(ctx, dirfd, pathname, times, flags, 8)
