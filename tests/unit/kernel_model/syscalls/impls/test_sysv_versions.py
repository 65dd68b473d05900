"""i386's System V ctl calls and their struct versions (LTP semctl03 on i386: EINVAL where
Linux says EFAULT). The direct calls (semctl, msgctl, shmctl) always take the IPC_64 layouts
(ipc/sem.c: SYSCALL_DEFINE4(semctl) is ksys_semctl(..., IPC_64)); only the ipc(2) multiplexer
parses the version (ksys_old_semctl: ipc_parse_version). And a command whose struct does not
depend on the version (GETALL, GETVAL) is the same either way. Checked natively with a gcc -m32
program: direct GETALL and IPC_SET into an unreadable page are EFAULT, a direct IPC_SET without
IPC_64 reads struct semid64_ds; through ipc(2), IPC_SET without IPC_64 reads the old struct."""
import struct

from kernel_model import errno as E
from tests.property.syscall_fuzz_guest import UNMAPPED

from ...call_script import BUF, run_script

IPC_PRIVATE, IPC_SET, IPC_STAT, IPC_64, GETVAL, GETALL = 0, 1, 2, 0x100, 12, 13
SEMCTL = 3                                       # ipc(2)'s call number
MODE_AT = 20                                     # struct ipc64_perm's mode on i386


def _ipc64_perm(mode: int) -> bytes:
    return struct.pack("<5IHHHH", 0, 0, 0, 0, 0, mode, 0, 0, 0).ljust(64, b"\0")


def _old_semid_ds(mode: int) -> bytes:
    return struct.pack("<i6H", 0, 0, 0, 0, 0, mode, 0).ljust(64, b"\0")


def test_i386_direct_semctl_takes_ipc64_and_ipc2_parses_the_version():
    # BUF: a semid64_ds; BUF+64: an old semid_ds; BUF+128: ipc(2)'s union, pointing at it
    data = _ipc64_perm(0o640) + _old_semid_ds(0o604) + struct.pack("<I", BUF + 64)
    results, buf, _ = run_script("i386", [
        ("semget", IPC_PRIVATE, 2, 0o600),
        ("semctl", 0, 0, GETALL, UNMAPPED),              # no IPC_64: still GETALL
        ("semctl", 0, 0, IPC_SET, UNMAPPED),
        ("semctl", 0, 0, IPC_SET, "BUF"),                # semid64_ds without IPC_64
        ("semctl", 0, 0, IPC_STAT | IPC_64, "BUF+256"),
        ("ipc", SEMCTL, 0, 1, GETVAL, "BUF+128"),        # ipc(2), no IPC_64: the same
        ("ipc", SEMCTL, 0, 0, IPC_SET, "BUF+128"),       # ipc(2), old struct semid_ds
        ("semctl", 0, 0, IPC_STAT | IPC_64, "BUF+384"),
        ("ipc", SEMCTL, 0, 0, IPC_STAT, "BUF+128"),      # old layouts to write: not modeled
    ], data=data)
    assert results[:8] == [0, -E.EFAULT, -E.EFAULT, 0, 0, 0, 0, 0]
    assert results[8] == -E.EINVAL
    assert struct.unpack_from("<H", buf, 256 + MODE_AT)[0] & 0o777 == 0o640
    assert struct.unpack_from("<H", buf, 384 + MODE_AT)[0] & 0o777 == 0o604
