"""process_vm_readv and process_vm_writev: copy between the caller's memory and another
process's (mm/process_vm_access.c process_vm_rw).

Linux's order: flags must be 0 (EINVAL); the local iovec is imported as readv's (EFAULT,
EINVAL), and an empty one copies nothing; the remote iovec is only read (iovec_from_user: the
addresses are the other process's); no remote byte asked for returns 0 before the pid is
looked at; then the task (ESRCH, also for one whose memory is gone) and the right to trace it
(mm_access with PTRACE_MODE_ATTACH_REALCREDS: EPERM). The remote segments are copied in turn
while the local side has room; a remote page that cannot be had (unmapped; PROT_NONE; not
writable for a write, as pin_user_pages_remote without FOLL_FORCE) or a local one that
faults ends the copy: the call returns the bytes copied, or EFAULT if none were.
"""
import struct

from ... import errno as E
from ...pid_namespace import global_pid
from ...errno import GuestErrno
from ...memory.vm import PROT_READ, PROT_WRITE
from ...iovec import UIO_MAXIOV, import_iovec
from ..kinds import K
from ..registry import syscall

CAP_SYS_PTRACE = 19
ARGS = (("pid", K.PID), ("local_iov", K.PTR), ("liovcnt", K.ULONG), ("remote_iov", K.PTR),
        ("riovcnt", K.ULONG), ("flags", K.HEX))


@syscall("process_vm_readv", args=ARGS)
def sys_process_vm_readv(ctx, pid, local_iov, liovcnt, remote_iov, riovcnt, flags):
    return _process_vm_rw(ctx, pid, local_iov, liovcnt, remote_iov, riovcnt, flags, write=False)


@syscall("process_vm_writev", args=ARGS)
def sys_process_vm_writev(ctx, pid, local_iov, liovcnt, remote_iov, riovcnt, flags):
    return _process_vm_rw(ctx, pid, local_iov, liovcnt, remote_iov, riovcnt, flags, write=True)


def _process_vm_rw(ctx, pid, local_iov, liovcnt, remote_iov, riovcnt, flags, *, write: bool) -> int:
    if flags:
        raise GuestErrno(E.EINVAL)
    local = [(base, length) for base, length in import_iovec(ctx, local_iov, liovcnt) if length]
    if not local:
        return 0
    remote = [(base, length) for base, length in _remote_iovec(ctx, remote_iov, riovcnt) if length]
    if not remote:
        return 0
    target = _traceable(ctx, ctx.int32(pid))
    copied, faulted = 0, False
    cursor = _LocalCursor(ctx, local, write)
    for base, length in remote:
        want = min(length, cursor.left)
        room = _remote_prefix(target.vm, base, want, write)
        moved = cursor.move(target.machine.mem, base, room)
        copied += moved
        if moved < want or not cursor.left:
            faulted = moved < want
            break
    if not copied and faulted:
        raise GuestErrno(E.EFAULT)
    return copied


def _remote_iovec(ctx, uvec: int, count: int) -> list[tuple[int, int]]:
    """iovec_from_user: at most UIO_MAXIOV entries (EINVAL), readable (EFAULT), no negative
    length (EINVAL). The addresses are not checked here: they are the other process's."""
    count &= 0xFFFFFFFF
    if count > UIO_MAXIOV:
        raise GuestErrno(E.EINVAL)
    entry = 2 * ctx.word
    raw = ctx.read(uvec, count * entry) if count else b""
    fmt = "<Ii" if ctx.word == 4 else "<Qq"
    segments = [struct.unpack_from(fmt, raw, i * entry) for i in range(count)]
    if any(length < 0 for _, length in segments):
        raise GuestErrno(E.EINVAL)
    return segments


def _traceable(ctx, pid: int):
    """find_get_task_by_vpid (a thread's id finds its process) and mm_access's permission."""
    pid = global_pid(ctx.proc, pid) if pid > 0 else pid
    target = next((p for p in ctx.kernel.processes.values()
                   if p.pid == pid or any(t.tid == pid for t in p.threads)), None) if pid > 0 else None
    if target is None or target.space is None:
        raise GuestErrno(E.ESRCH)
    if target is not ctx.proc and not _may_attach(ctx.proc.creds, target.creds):
        raise GuestErrno(E.EPERM)
    return target


def _may_attach(mine, theirs) -> bool:
    """kernel/ptrace.c __ptrace_may_access (real credentials): the caller's real uid and gid
    are each of the target's ids, or it has CAP_SYS_PTRACE."""
    same_uid = mine.uid == theirs.uid == theirs.euid == theirs.suid
    same_gid = mine.gid == theirs.gid == theirs.egid == theirs.sgid
    return same_uid and same_gid or mine.capable(CAP_SYS_PTRACE)


def _remote_prefix(vm, addr: int, size: int, write: bool) -> int:
    """How many bytes from `addr` the other process's pages give before one cannot be had."""
    at, end = addr, addr + size
    while at < end:
        vma = vm.vma_at(at)
        if vma is None or not vma.perms or write and not vma.perms & PROT_WRITE:
            break
        at = vma.end
    return min(at, end) - addr


class _LocalCursor:
    """The caller's side of the copy: its segments in order, filled from (read) or drained
    into (write) the other process's memory, stopping at the first local fault."""

    def __init__(self, ctx, segments, write: bool):
        self.ctx, self.segments, self.write = ctx, list(segments), write
        self.left = sum(length for _, length in segments)

    def move(self, mem, remote: int, size: int) -> int:
        """Copy `size` bytes between the other process's memory `mem` at `remote` and here."""
        done = 0
        while done < size and self.segments:
            base, length = self.segments[0]
            n = min(length, size - done)
            room = self.ctx.accessible_prefix(base, n, PROT_READ if self.write else PROT_WRITE)
            if room:
                if self.write:
                    mem.write(remote + done, self.ctx.read(base, room))
                else:
                    self.ctx.store(base, mem.read(remote + done, room))
            done += room
            self.left -= room
            if room < n:
                self.segments = []            # a local fault ends the copy
                self.left = 0
                break
            self.segments[0] = (base + n, length - n)
            if length == n:
                self.segments.pop(0)
        return done
