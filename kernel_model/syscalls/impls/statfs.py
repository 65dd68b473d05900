"""statfs, fstatfs and i386's statfs64/fstatfs64 (fs/statfs.c, kernel/compat.c).

Every answer is modeled, never the host's: the same run gives the same numbers on every
machine. Which file system a file is on follows from its st_dev (kernel_model/fs/constants.py):
  - the rootfs (the in-memory overlay, or the write-through rootfs folder): an overlay
    (OVERLAYFS_SUPER_MAGIC) whose upper layer is memory, so its size is the run's memory budget
    (--memory): f_blocks = budget / 4096 and f_bfree = f_bavail = what the live address spaces
    leave of it. No inode limit is modeled: f_files = f_ffree = 0, as a tmpfs mounted with
    nr_inodes=0 reports;
  - /dev: devtmpfs (TMPFS_MAGIC), half the budget in size (tmpfs's default) and empty;
  - /proc: PROC_SUPER_MAGIC, all counts 0 (simple_statfs);
  - a pipe or the sandbox's stdio: PIPEFS_MAGIC, all counts 0;
  - a tmpfs or hugetlbfs the guest mounted: what fs/tmpfs.py's Superblock reports.
f_fsid is u64_to_fsid(huge_encode_dev(s_dev)) as most file systems give it (0 for proc and
pipefs, which leave it unset); f_flags are ST_VALID and the mount flags (relatime; /dev
nosuid; /proc nosuid,nodev,noexec).

Layouts: x86-64 struct statfs is 15 longs with an fsid of two ints (120 bytes); i386's
compat_statfs the same in 32-bit fields (64 bytes, EOVERFLOW when a count does not fit,
put_compat_statfs); compat_statfs64 (i386 statfs64/fstatfs64) 84 packed bytes, and the size
argument must be exactly that (EINVAL, checked before the lookup).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import DEVTMPFS_DEV, PIPE_DEV, PROC_DEV
from ...process.proc import ZOMBIE
from ...fs.mount_points import superblock_of
from ..kinds import K
from ..registry import syscall
from .paths import base_dir, fs_view

OVERLAYFS_SUPER_MAGIC, TMPFS_MAGIC, PROC_SUPER_MAGIC = 0x794C7630, 0x01021994, 0x9FA0
PIPEFS_MAGIC = 0x50495045
ST_RDONLY, ST_NOSUID, ST_NODEV, ST_NOEXEC, ST_VALID, ST_RELATIME = 1, 2, 4, 8, 0x20, 0x400
BLOCK = 4096
NAME_MAX = 255

STATFS_X86_64 = struct.Struct("<qqQQQQQIIqqq32x")
STATFS_I386 = struct.Struct("<iiIIIIIIIiii16x")
STATFS64_I386 = struct.Struct("<IIQQQQQIIIII16x")


def free_budget(kernel) -> int:
    """Bytes of the memory budget the live address spaces leave (Kernel's --memory check)."""
    spaces = {p.space.serial: p.space for p in kernel.processes.values()
              if p.state != ZOMBIE and p.space is not None}
    used = sum(space.vm.mapped_bytes() for space in spaces.values())
    return max(0, kernel.config.memory_limit - used)


def describe(ctx, st) -> tuple:
    """(f_type, f_bsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, fsid, f_namelen,
    f_frsize, f_flags) of the file system holding the file whose stat is `st`."""
    budget = ctx.kernel.config.memory_limit
    sb = superblock_of(ctx.kernel.fs, st.dev)
    if sb is not None:                  # a tmpfs or hugetlbfs the guest mounted (fs/tmpfs.py)
        return sb.statfs_fields(budget, NAME_MAX, ST_VALID | ST_RELATIME)
    if st.dev == PROC_DEV:
        return (PROC_SUPER_MAGIC, BLOCK, 0, 0, 0, 0, 0, (0, 0), NAME_MAX, BLOCK,
                ST_VALID | ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_RELATIME)
    if st.dev == PIPE_DEV:
        return (PIPEFS_MAGIC, BLOCK, 0, 0, 0, 0, 0, (0, 0), NAME_MAX, BLOCK, ST_VALID)
    fsid = (st.dev & 0xFFFFFFFF, st.dev >> 32)
    if st.dev == DEVTMPFS_DEV:
        size = budget // 2 // BLOCK
        return (TMPFS_MAGIC, BLOCK, size, size, size, 0, 0, fsid, NAME_MAX, BLOCK,
                ST_VALID | ST_NOSUID | ST_RELATIME)
    free = free_budget(ctx.kernel) // BLOCK
    return (OVERLAYFS_SUPER_MAGIC, BLOCK, budget // BLOCK, free, free, 0, 0, fsid, NAME_MAX,
            BLOCK, ST_VALID | ST_RELATIME)


def pack(ctx, fields: tuple, *, wide: bool) -> bytes:
    """The ABI's struct: `wide` for compat_statfs64 on i386."""
    ftype, bsize, blocks, bfree, bavail, files, ffree, fsid, namelen, frsize, flags = fields
    if ctx.abi == "x86_64":
        return STATFS_X86_64.pack(ftype, bsize, blocks, bfree, bavail, files, ffree, *fsid,
                                  namelen, frsize, flags)
    if wide:
        return STATFS64_I386.pack(ftype, bsize, blocks, bfree, bavail, files, ffree, *fsid,
                                  namelen, frsize, flags)
    if any(n > 0xFFFFFFFF for n in (blocks, bfree, bavail, files, ffree)):
        raise GuestErrno(E.EOVERFLOW)              # put_compat_statfs
    return STATFS_I386.pack(ctx.int32(ftype), bsize, blocks, bfree, bavail, files, ffree,
                            *fsid, namelen, frsize, flags)


def _path_stat(ctx, pathname):
    path = ctx.read_path(pathname)
    return ctx.kernel.fs.stat(path, base_dir(ctx, -100, path), fs_view(ctx))


def _check_size(ctx, size) -> None:
    if size & 0xFFFFFFFF != STATFS64_I386.size:     # compat_sys_statfs64: sz != sizeof(*buf)
        raise GuestErrno(E.EINVAL)


@syscall("statfs", args=(("pathname", K.PATH), ("buf", K.STRUCT)))
def sys_statfs(ctx, pathname, buf):
    ctx.write(buf, pack(ctx, describe(ctx, _path_stat(ctx, pathname)), wide=False))
    return 0


@syscall("fstatfs", args=(("fd", K.FD), ("buf", K.STRUCT)))
def sys_fstatfs(ctx, fd, buf):
    st = ctx.proc.fds.get(ctx.int32(fd)).stat()
    ctx.write(buf, pack(ctx, describe(ctx, st), wide=False))
    return 0


@syscall("statfs64", args=(("pathname", K.PATH), ("sz", K.ULONG), ("buf", K.STRUCT)))
def sys_statfs64(ctx, pathname, size, buf):
    _check_size(ctx, size)
    ctx.write(buf, pack(ctx, describe(ctx, _path_stat(ctx, pathname)), wide=True))
    return 0


@syscall("fstatfs64", args=(("fd", K.FD), ("sz", K.ULONG), ("buf", K.STRUCT)))
def sys_fstatfs64(ctx, fd, size, buf):
    _check_size(ctx, size)
    st = ctx.proc.fds.get(ctx.int32(fd)).stat()
    ctx.write(buf, pack(ctx, describe(ctx, st), wide=True))
    return 0
