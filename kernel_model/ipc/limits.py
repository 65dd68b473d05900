"""The IPC namespace's limits (struct ipc_namespace's msg_ctl*, sem_ctls, shm_ctl*): one value
each, which the calls read and root may change through /proc/sys/kernel (ipc/ipc_sysctl.c).

The defaults are include/uapi/linux/{msg,sem,shm}.h's. The handlers, as ipc_sysctl.c has them:
msgmax and msgmnb proc_dointvec_minmax from 0 to INT_MAX, msgmni and shmmni from 0 to IPCMNI,
shmmax and shmall proc_doulongvec_minmax (any unsigned long; shmall counts pages), and sem's
four ints (semmsl, semmns, semopm, semmni) proc_dointvec, checked by proc_ipc_sem_dointvec:
a semmni outside 0..IPCMNI is ERANGE (sem_check_semmni) and semmni keeps its old value (the
others written stay, as on the reference host).
This module imports no kind's module: a namespace publishes its limits without them.
"""
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from ..fs.sysctl_write import BLANKS, int_in, int_writer, parse_int
from .ids import IPCMNI                # ipc/util.h: the most ids of one kind (no ipcmni_extend)

INT_MAX = (1 << 31) - 1
MSGMAX, MSGMNB, MSGMNI = 8192, 16384, 32000
SEMMSL, SEMMNS, SEMOPM, SEMMNI = 32000, 1024000000, 500, 32000
SHMMNI = 4096
SHMMAX = SHMALL = (1 << 64) - 1 - (1 << 24)        # ULONG_MAX - 2**24 (bytes; pages for shmall)
SEM_FIELDS = 4


@dataclass
class IpcLimits:
    msgmax: int = MSGMAX               # the largest message msgsnd takes
    msgmnb: int = MSGMNB               # a new queue's msg_qbytes, and IPC_SET's unprivileged top
    msgmni: int = MSGMNI               # queues at once
    sem: list = field(default_factory=lambda: [SEMMSL, SEMMNS, SEMOPM, SEMMNI])
    shmmax: int = SHMMAX               # the largest segment, bytes
    shmall: int = SHMALL               # every segment's pages together
    shmmni: int = SHMMNI               # segments at once

    @property
    def semmsl(self) -> int:
        return self.sem[0]

    @property
    def semmns(self) -> int:
        return self.sem[1]

    @property
    def semopm(self) -> int:
        return self.sem[2]

    @property
    def semmni(self) -> int:
        return self.sem[3]

    def sysctls(self) -> dict[bytes, tuple[Callable[[], bytes], Callable[[int, bytes], int]]]:
        """/proc/sys/kernel path -> (text, writer)."""
        table = {b"kernel/sem": (lambda: b"\t".join(b"%d" % v for v in self.sem),
                                 self._write_sem)}
        for name, convert in (("msgmax", int_in(0, INT_MAX)), ("msgmnb", int_in(0, INT_MAX)),
                              ("msgmni", int_in(0, IPCMNI)), ("shmmax", _ulong),
                              ("shmall", _ulong), ("shmmni", int_in(0, IPCMNI))):
            table[b"kernel/" + name.encode()] = (
                lambda name=name: b"%d" % getattr(self, name),
                int_writer(lambda value, name=name: setattr(self, name, value), convert))
        return dict(sorted(table.items()))

    def _write_sem(self, position: int, data: bytes) -> int:
        """proc_ipc_sem_dointvec: proc_dointvec stores each int as it is parsed (an error
        stops it there), then sem_check_semmni; on any error semmni is put back."""
        old_semmni = self.sem[3]
        try:
            for index, word in enumerate(data.split()[:SEM_FIELDS]):
                self.sem[index] = _int(word)
            if not 0 <= self.sem[3] <= IPCMNI:
                raise GuestErrno(E.ERANGE)                  # sem_check_semmni
        except GuestErrno:
            self.sem[3] = old_semmni
            raise
        return len(data)


def _int(word: bytes) -> int:
    """do_proc_dointvec_conv: a value outside int's range is EINVAL."""
    value = parse_int(word.strip(BLANKS))
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise GuestErrno(E.EINVAL)
    return value


def _ulong(value: int) -> int:
    """__do_proc_doulongvec_minmax: a minus is EINVAL (parse_int kept it below 2**64)."""
    if value < 0:
        raise GuestErrno(E.EINVAL)
    return value
