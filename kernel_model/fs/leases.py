"""File leases (fs/locks.c: generic_add_lease, __break_lease, fcntl_getlease, time_out_leases).

A lease is held by an open file description on its inode: a read lease while nobody has the
inode open for writing, a write lease while nobody else has it open (impls/leases.py).
An open for writing, or a truncate, of an inode under a lease breaks it: each conflicting
lease is marked to go (FL_UNLOCK_PENDING, or FL_DOWNGRADE_PENDING for a write lease an open
for reading breaks), its holder is sent the description's F_SETSIG signal (SIGIO without one)
with POLL_MSG and the fd the lease was set through (lease_break_callback's kill_fasync), and
the breaker waits until the holder gives the lease up or downgrades it (F_SETLEASE), or until
lease-break-time seconds pass, when the lease is taken away (time_out_leases). With
O_NONBLOCK the opener gets EWOULDBLOCK instead of waiting, the break started all the same.
The lease goes with its description's last close (locks_remove_file).

The breaker's wait is the model's sleep: the call retries from scratch when woken, so a lease
already breaking is not signalled twice. The blocked opener of Linux already holds its write
access (do_dentry_open takes it before break_lease), so a lease asked for meanwhile is EAGAIN:
a lease a writer sleeps on stands for that writer here, until the lease goes (a sleeper
killed meanwhile still counts; Linux's i_writecount would drop).
"""
from dataclasses import dataclass

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from .constants import O_ACCMODE, O_NONBLOCK, O_RDONLY
from .fasync import POLL_MSG, fown_of, sigio_siginfo
from .locks import F_RDLCK, F_UNLCK, F_WRLCK

NS = 1_000_000_000


@dataclass
class Lease:
    file: object
    kind: int
    fd: int                    # fasync's fa_fd: the fd F_SETLEASE was called through
    send: object               # the kernel's send_sigio, bound (impls/fown.py sender)
    target: int | None = None  # F_UNLCK or F_RDLCK while breaking (target_leasetype)
    deadline_ns: int = 0       # fl_break_time
    writer_waits: bool = False # a breaker sleeps to open the inode for writing


def channel_of(key) -> tuple:
    """What a lease breaker sleeps on."""
    return ("lease", key)


class Leases:
    """Every inode's leases, by (st_dev, st_ino)."""

    def __init__(self, wakeup, now_ns, break_time):
        """`now_ns`: the monotonic clock; `break_time`: /proc/sys/fs/lease-break-time, s."""
        self._wakeup, self._now_ns, self._break_time = wakeup, now_ns, break_time
        self._leases: dict[tuple, list[Lease]] = {}

    def __bool__(self) -> bool:
        return bool(self._leases)

    def of(self, key, file) -> Lease | None:
        return next((lease for lease in self._leases.get(key, ()) if lease.file is file), None)

    def kind_of(self, key, file) -> int:
        """fcntl_getlease(): the type the lease will have once its break is through."""
        self._time_out(key)
        lease = self.of(key, file)
        if lease is None:
            return F_UNLCK
        return lease.target if lease.target is not None else lease.kind

    def set(self, key, file, kind: int, fd: int, send, busy: bool) -> None:
        """generic_setlease() for F_RDLCK, F_WRLCK or F_UNLCK (the owner is set by the caller);
        `busy`: other opens of the inode conflict with the lease (check_conflicting_open)."""
        self._time_out(key)
        mine = self.of(key, file)
        if kind == F_UNLCK:
            if mine is None:
                raise GuestErrno(E.EAGAIN)                  # generic_delete_lease
            self._remove(key, mine)
            return
        leases = self._leases.get(key, [])
        if busy or any(lease.writer_waits for lease in leases):
            raise GuestErrno(E.EAGAIN)                      # check_conflicting_open
        others = [lease for lease in leases if lease is not mine]
        if kind == F_WRLCK and others or any(lease.kind == F_WRLCK for lease in others):
            # no exclusive lease beside another's (generic_add_lease); nor a lease beside
            # another's write lease, which the caller's own open would have broken first
            raise GuestErrno(E.EAGAIN)
        if mine is None:
            leases.append(Lease(file, kind, fd, send))
            self._leases[key] = leases
            return
        mine.kind, mine.fd = kind, fd                       # lease_modify
        if kind == F_RDLCK and mine.target == F_RDLCK:
            mine.target = None                              # lease_clear_pending
        self._wakeup(channel_of(key))

    def break_for(self, key, flags: int) -> None:
        """__break_lease(): for an open with `flags` (O_WRONLY for a truncate)."""
        self._time_out(key)
        want_write = flags & O_ACCMODE != O_RDONLY
        conflicting = [lease for lease in self._leases.get(key, ())
                       if want_write or lease.kind == F_WRLCK]
        if not conflicting:
            return
        deadline = self._now_ns() + max(self._break_time(), 0) * NS
        for lease in conflicting:
            if lease.target == F_UNLCK or not want_write and lease.target is not None:
                continue                                    # already breaking
            lease.target = F_UNLCK if want_write else F_RDLCK
            lease.deadline_ns = deadline
            fown = fown_of(lease.file)
            if fown.pid:
                lease.send(fown, sigio_siginfo(fown, POLL_MSG, lease.fd))
        if flags & O_NONBLOCK:
            raise GuestErrno(E.EAGAIN)                       # EWOULDBLOCK
        for lease in conflicting:
            lease.writer_waits = lease.writer_waits or want_write
        raise WouldBlock(channel_of(key), "breaking a lease",
                         deadline_ns=min(lease.deadline_ns for lease in conflicting))

    def closed(self, file) -> None:
        """locks_remove_file(): the description's leases go with its last close."""
        for key, leases in list(self._leases.items()):
            for lease in [lease for lease in leases if lease.file is file]:
                self._remove(key, lease)

    def _time_out(self, key) -> None:
        """time_out_leases(): a lease whose break time has passed is downgraded or gone."""
        now = self._now_ns()
        for lease in list(self._leases.get(key, ())):
            if lease.target is None or now < lease.deadline_ns:
                continue
            if lease.target == F_UNLCK:
                self._remove(key, lease)
            else:
                lease.kind, lease.target = F_RDLCK, None
                self._wakeup(channel_of(key))

    def _remove(self, key, lease: Lease) -> None:
        leases = self._leases[key]
        leases.remove(lease)
        if not leases:
            del self._leases[key]
        self._wakeup(channel_of(key))
