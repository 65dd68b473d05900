"""kcmp(2) (kernel/kcmp.c, CONFIG_CHECKPOINT_RESTORE): whether two tasks share a kernel object.

Linux's order: each pid names a task (a thread id finds its thread: ESRCH); the caller must be
allowed to read both (ptrace_may_access with PTRACE_MODE_READ_REALCREDS: EPERM); then by type:
- KCMP_FILE: the open file descriptions behind fd idx1 of the first and idx2 of the second
  (EBADF for either missing);
- KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND, KCMP_IO, KCMP_SYSVSEM: the task's address space,
  fd table, fs_struct, signal handlers, io_context and System V undo list;
- KCMP_EPOLL_TFD: the file of fd idx1 against the file an epoll instance of the second task
  watches (idx2 points to struct kcmp_epoll_slot {u32 efd, tfd, toff}: EFAULT, EBADF for no
  such efd, EINVAL for an efd that is no epoll, ENOENT for no such target);
- any other type EINVAL.
The answer orders the two objects as kcmp_ptr does: 0 for one object, else 1 or 2 by an order
that stays the same for the run (Linux's is by obfuscated pointer; here by first sight, so
the same run gives the same answers).

What the model shares: threads share everything; clone(CLONE_VM) shares the Space and
CLONE_FILES the fd table, CLONE_FS the fs_struct (process/clone_fs.py) between processes. The
signal handlers are each process's own (CLONE_SIGHAND without CLONE_THREAD is not modeled), no
task has an
io_context (never allocated: every task's is NULL, so any two compare equal, as on Linux for
tasks that did no block I/O), and the undo list is NULL until a SEM_UNDO operation.
"""
import struct
import weakref

from ... import errno as E
from ...pid_namespace import global_pid
from ...errno import GuestErrno
from ...fs.epoll import Epoll
from ..kinds import K
from ..registry import syscall
from .process_vm import _may_attach

KCMP_FILE, KCMP_VM, KCMP_FILES, KCMP_FS, KCMP_SIGHAND, KCMP_IO, KCMP_SYSVSEM = range(7)
KCMP_EPOLL_TFD = 7
SHARED = {
    KCMP_VM: lambda proc: proc.space,
    KCMP_FILES: lambda proc: proc.fds,
    KCMP_FS: lambda proc: proc.fs_struct,
    KCMP_SIGHAND: lambda proc: proc.sigactions,
    KCMP_IO: lambda proc: None,
    KCMP_SYSVSEM: lambda proc: proc.sem_undo or None,
}


@syscall("kcmp", args=(("pid1", K.PID), ("pid2", K.PID), ("type", K.INT), ("idx1", K.ULONG),
                       ("idx2", K.ULONG)))
def sys_kcmp(ctx, pid1, pid2, kind, idx1, idx2):
    first, second = _task(ctx, ctx.int32(pid1)), _task(ctx, ctx.int32(pid2))
    for proc in (first, second):
        if proc is not ctx.proc and not _may_attach(ctx.proc.creds, proc.creds):
            raise GuestErrno(E.EPERM)
    kind = ctx.int32(kind)
    if kind == KCMP_FILE:
        one, other = _file(first, idx1), _file(second, idx2)
    elif kind == KCMP_EPOLL_TFD:
        one, other = _file(first, idx1), _epoll_target(ctx, second, idx2)
    elif kind in SHARED:
        one, other = SHARED[kind](first), SHARED[kind](second)
    else:
        raise GuestErrno(E.EINVAL)
    return _order_of(ctx.kernel).compare(one, other)


def _task(ctx, pid: int):
    """find_task_by_vpid(): the process of the task with that id."""
    pid = global_pid(ctx.proc, pid) if pid else -1
    for proc in ctx.kernel.processes.values():
        if any(thread.tid == pid for thread in proc.threads):
            return proc
    raise GuestErrno(E.ESRCH)


def _file(proc, fd: int):
    entry = proc.fds.entries.get(fd) if proc.fds is not None else None
    if entry is None:
        raise GuestErrno(E.EBADF)
    return entry.file


def _epoll_target(ctx, proc, slot_address: int):
    """get_epoll_tfile_raw_ptr(): the toff-th file the epoll fd efd watches as fd tfd."""
    efd, tfd, toff = struct.unpack("<III", ctx.read(slot_address, 12))
    epoll = _file(proc, efd)
    if not isinstance(epoll, Epoll):
        raise GuestErrno(E.EINVAL)
    targets = [item.file for item in epoll.items.values() if item.fd == tfd]
    if toff >= len(targets):
        raise GuestErrno(E.ENOENT)
    return targets[toff]


class _Order:
    """A rank for each object kcmp has compared, given at first sight (it keeps the objects:
    a rank is never handed to another object)."""

    def __init__(self):
        self._ranks: dict[int, tuple[object, int]] = {}

    def rank(self, thing) -> int:
        known = self._ranks.get(id(thing))
        if known is None:
            known = self._ranks[id(thing)] = (thing, len(self._ranks))
        return known[1]

    def compare(self, one, other) -> int:
        """kcmp_ptr(): 0 for one object, 1 if the first comes first, else 2."""
        first, second = self.rank(one), self.rank(other)
        return int(first < second) | int(first > second) << 1


_ORDERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _order_of(kernel) -> _Order:
    order = _ORDERS.get(kernel)
    if order is None:
        order = _ORDERS[kernel] = _Order()
    return order
