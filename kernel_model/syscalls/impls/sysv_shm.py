"""shmget, shmat, shmdt, shmctl (ipc/shm.c) over the run's segments (kernel_model/ipc/shm.py).

shmat maps the segment's shared pages with vm.mmap (MAP_SHARED, at the given address with
MAP_FIXED, rounded down with SHM_RND; EINVAL over an existing mapping unless SHM_REMAP), and
the process remembers the attachment by address (proc.shm_attached) for shmdt, fork (the
child inherits it), exec and exit (which detach).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...ipc.ids import (IPC_INFO, IPC_RMID, IPC_SET, IPC_STAT, S_IRUGO, S_IWUGO,
                        check_owner, ipcget)
from ...ipc.layouts import ds_size, pack_shmid, parse_cmd, update_perm
from ...ipc.shm import PAGE, SHM_DEST, SHM_LOCKED, SHMMIN, SHMSEG, Segment
from ...memory.vm import MAP_FIXED, MAP_SHARED, PROT_EXEC, PROT_READ, PROT_WRITE
from ..kinds import K, Ret
from ..registry import syscall
from ...process.namespaces import ipc_of
from .sysv_msg import check_perm, creds_groups, now_seconds

SHM_RDONLY, SHM_RND, SHM_REMAP, SHM_EXEC = 0o10000, 0o20000, 0o40000, 0o100000
SHM_LOCK, SHM_UNLOCK, SHM_STAT, SHM_INFO, SHM_STAT_ANY = 11, 12, 13, 14, 15
SHM_HUGETLB = 0o4000
CAP_IPC_LOCK = 14


@syscall("shmget", args=(("key", K.HEX), ("size", K.ULONG), ("shmflg", K.OCTAL)))
def sys_shmget(ctx, key, size, flags):
    flags = ctx.int32(flags)
    size &= ctx.mask

    def make(perm):                             # newseg()
        limits = ipc_of(ctx.kernel, ctx.proc).limits
        if size < SHMMIN or size > limits.shmmax:
            raise GuestErrno(E.EINVAL)
        used = sum(s.mapped_size for s in ipc_of(ctx.kernel, ctx.proc).shm.objects.values()) // PAGE
        pages = -(-size // PAGE)
        if used + pages > limits.shmall or size > ctx.proc.vm.memory_limit:     # shmall: pages
            raise GuestErrno(E.ENOSPC if size <= ctx.proc.vm.memory_limit else E.ENOMEM)
        if flags & SHM_HUGETLB:
            raise GuestErrno(E.EINVAL)          # no huge page size: hstate_sizelog() is NULL
        return Segment(perm, size, now_seconds(ctx), ctx.proc.pid)

    def more_checks(segment):
        if size > segment.size:
            raise GuestErrno(E.EINVAL)
    return ipcget(ipc_of(ctx.kernel, ctx.proc).shm, key & 0xFFFFFFFF, flags & ~SHM_HUGETLB, *creds_groups(ctx),
                  make, more_checks)


def _attach_address(ctx, addr: int, flags: int) -> int:
    if addr % PAGE:
        if not flags & SHM_RND:
            raise GuestErrno(E.EINVAL)
        addr -= addr % PAGE
        if not addr and flags & SHM_REMAP:
            raise GuestErrno(E.EINVAL)
    elif not addr and flags & SHM_REMAP:
        raise GuestErrno(E.EINVAL)
    return addr


@syscall("shmat", args=(("shmid", K.INT), ("shmaddr", K.PTR), ("shmflg", K.OCTAL)),
         returns=Ret.HEX)
def sys_shmat(ctx, shmid, addr, flags):
    shmid, flags = ctx.int32(shmid), ctx.int32(flags)
    if shmid < 0:
        raise GuestErrno(E.EINVAL)
    addr = _attach_address(ctx, addr, flags)
    segment = ipc_of(ctx.kernel, ctx.proc).shm.find(shmid)
    prot, wanted = PROT_READ, S_IRUGO
    if not flags & SHM_RDONLY:
        prot, wanted = prot | PROT_WRITE, wanted | S_IWUGO
    if flags & SHM_EXEC:
        prot, wanted = prot | PROT_EXEC, wanted | 0o111
    check_perm(ctx, segment, wanted)
    vm = ctx.proc.vm
    if addr and not flags & SHM_REMAP and vm._overlapping(addr, addr + segment.mapped_size):
        raise GuestErrno(E.EINVAL)
    start = vm.mmap(addr, segment.mapped_size, prot, MAP_SHARED | (MAP_FIXED if addr else 0),
                    name=b"/SYSV%08x" % (segment.perm.key & 0xFFFFFFFF),
                    backing=segment.backing())
    ctx.proc.shm_attached[start] = segment
    segment.nattch += 1
    segment.atime, segment.lpid = now_seconds(ctx), ctx.proc.pid
    return start


@syscall("shmdt", args=(("shmaddr", K.PTR),), outside_hook=True)
def sys_shmdt(ctx, addr):
    segment = ctx.proc.shm_attached.pop(addr, None)
    if segment is None:
        raise GuestErrno(E.EINVAL)
    ctx.proc.vm.munmap(addr, segment.mapped_size)
    segment.nattch -= 1
    segment.dtime, segment.lpid = now_seconds(ctx), ctx.proc.pid
    ipc_of(ctx.kernel, ctx.proc).detached(segment)
    return 0


def _shminfo(ctx, cmd: int, buf: int) -> int:
    ids = ipc_of(ctx.kernel, ctx.proc).shm
    if cmd == IPC_INFO:
        limits = ipc_of(ctx.kernel, ctx.proc).limits
        fields = [limits.shmmax, SHMMIN, limits.shmmni, SHMSEG, limits.shmall, 0, 0, 0, 0]
        if ctx.word == 4:
            fields = [min(f, 0xFFFFFFFF) for f in fields]
        ctx.write(buf, struct.pack(f"<9{'Q' if ctx.word == 8 else 'I'}", *fields))
    else:                                       # SHM_INFO: struct shm_info
        # shm_get_stat: shm_tot counts every segment's pages, shm_rss those it holds in memory,
        # which a segment never attached has not yet (its pages come at the first shmat, as
        # /proc/sysvipc/shm's rss column says: proctext.py)
        segments = list(ids.objects.values())
        total = sum(s.mapped_size for s in segments) // PAGE
        resident = sum(s.mapped_size for s in segments if s.pages is not None) // PAGE
        word = "Q" if ctx.word == 8 else "I"
        ctx.write(buf, struct.pack(f"<i{'4x' if ctx.word == 8 else ''}5{word}", len(segments),
                                   total, resident, 0, 0, 0))
    return max(ids.max_index(), 0)


def _stat(ctx, segment, buf: int) -> None:
    ctx.write(buf, pack_shmid(ctx.abi, segment.perm, segment.size, segment.atime, segment.dtime,
                              segment.ctime, segment.cpid, segment.lpid, segment.nattch))


@syscall("shmctl", args=(("shmid", K.INT), ("cmd", K.INT), ("buf", K.PTR)))
def sys_shmctl(ctx, shmid, cmd, buf):
    return shmctl_with(ctx, shmid, cmd, buf, old_api=False)


def shmctl_with(ctx, shmid, cmd, buf, *, old_api: bool):
    """shmctl; `old_api`: reached through i386's ipc(2), which parses the IPC_64 version
    (layouts.parse_cmd)."""
    shmid, cmd = ctx.int32(shmid), parse_cmd(ctx.abi, cmd, "shm", old_api)
    ids = ipc_of(ctx.kernel, ctx.proc).shm
    if cmd in (IPC_INFO, SHM_INFO):
        return _shminfo(ctx, cmd, buf)
    if shmid < 0:
        raise GuestErrno(E.EINVAL)
    if cmd in (SHM_STAT, SHM_STAT_ANY):
        segment = ids.by_index(shmid)
        if cmd == SHM_STAT:
            check_perm(ctx, segment, S_IRUGO)
        _stat(ctx, segment, buf)
        return segment.perm.id
    if cmd == IPC_SET:
        raw = ctx.read(buf, ds_size(ctx.abi, "shm"))
        segment = ids.find(shmid)
        check_owner(segment.perm, ctx.proc.creds)
        update_perm(segment.perm, ctx.abi, raw)
        segment.ctime = now_seconds(ctx)
        return 0
    segment = ids.find(shmid)
    if cmd == IPC_STAT:
        check_perm(ctx, segment, S_IRUGO)
        _stat(ctx, segment, buf)
        return 0
    if cmd == IPC_RMID:
        check_owner(segment.perm, ctx.proc.creds)
        segment.perm.mode |= SHM_DEST
        ids.make_private(segment)
        ipc_of(ctx.kernel, ctx.proc).detached(segment)
        return 0
    if cmd in (SHM_LOCK, SHM_UNLOCK):
        creds = ctx.proc.creds
        if not creds.capable(CAP_IPC_LOCK) and creds.euid not in (segment.perm.uid, segment.perm.cuid):
            raise GuestErrno(E.EPERM)
        segment.perm.mode = segment.perm.mode | SHM_LOCKED if cmd == SHM_LOCK \
            else segment.perm.mode & ~SHM_LOCKED
        return 0
    raise GuestErrno(E.EINVAL)
