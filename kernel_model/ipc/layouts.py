"""The IPC_64 structures of each ABI (include/uapi/asm-generic/{ipcbuf,msgbuf,shmbuf}.h,
arch/x86/include/uapi/asm/sembuf.h; i386's are the compat_* of ipc/*.c).

struct ipc64_perm: key, uid, gid, cuid, cgid, mode, seq; x86-64's mode is 32-bit, i386's
16-bit with two bytes of padding. Times are seconds; i386 splits each in low and high words.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .ids import IpcPerm

PERM = {"x86_64": struct.Struct("<iIIIIIHH4x16x"), "i386": struct.Struct("<iIIIIH2xHH8x")}
# after the perm: (format of the rest, fields)
MSQID = {"x86_64": struct.Struct("<qqqQQQii16x"), "i386": struct.Struct("<IIIIIIIIIii8x")}
SEMID = {"x86_64": struct.Struct("<q8xq8xQ16x"), "i386": struct.Struct("<IIIIIII")}
SHMID = {"x86_64": struct.Struct("<QqqqiiQ16x"), "i386": struct.Struct("<IIIIIIIiiI8x")}


def pack_perm(abi: str, perm: IpcPerm) -> bytes:
    return PERM[abi].pack(perm.key, perm.uid, perm.gid, perm.cuid, perm.cgid, perm.mode,
                          perm.seq, 0)


def unpack_perm_ids(abi: str, raw: bytes) -> tuple[int, int, int]:
    """(uid, gid, mode) of a struct ipc64_perm, what IPC_SET takes from it."""
    _key, uid, gid, _cuid, _cgid, mode, _seq, _pad = PERM[abi].unpack_from(raw)
    return uid, gid, mode


def update_perm(perm: IpcPerm, abi: str, raw: bytes) -> None:
    """ipc_update_perm (ipc/util.c) for IPC_SET: the new owner ids and the low nine mode bits
    from the caller's struct ipc64_perm."""
    perm.uid, perm.gid, mode = unpack_perm_ids(abi, raw)
    perm.mode = perm.mode & ~0o777 | mode & 0o777


def _times(abi: str, *seconds: int) -> tuple:
    if abi == "x86_64":
        return seconds
    return tuple(v for s in seconds for v in (s & 0xFFFFFFFF, s >> 32 & 0xFFFFFFFF))


def pack_msqid(abi, perm, stime, rtime, ctime, cbytes, qnum, qbytes, lspid, lrpid) -> bytes:
    return pack_perm(abi, perm) + MSQID[abi].pack(*_times(abi, stime, rtime, ctime), cbytes,
                                                  qnum, qbytes, lspid, lrpid)


def pack_semid(abi, perm, otime, ctime, nsems) -> bytes:
    if abi == "x86_64":
        return pack_perm(abi, perm) + SEMID[abi].pack(otime, ctime, nsems)
    return pack_perm(abi, perm) + SEMID[abi].pack(*_times(abi, otime, ctime), nsems, 0, 0)


def pack_shmid(abi, perm, segsz, atime, dtime, ctime, cpid, lpid, nattch) -> bytes:
    if abi == "x86_64":
        return pack_perm(abi, perm) + SHMID[abi].pack(segsz, atime, dtime, ctime, cpid, lpid,
                                                      nattch)
    return pack_perm(abi, perm) + SHMID[abi].pack(segsz, *_times(abi, atime, dtime, ctime),
                                                  cpid, lpid, nattch)


def ds_size(abi: str, kind: str) -> int:
    rest = {"msg": MSQID, "sem": SEMID, "shm": SHMID}[kind][abi]
    return PERM[abi].size + rest.size


# The commands whose struct differs between the old layouts and IPC_64's, per kind
# (IPC_SET, IPC_STAT and each kind's *_STAT, *_STAT_ANY and MSG_INFO/SEM_INFO/SHM_INFO)
STRUCT_COMMANDS = {"msg": frozenset({1, 2, 11, 12, 13}), "sem": frozenset({1, 2, 18, 19, 20}),
                   "shm": frozenset({1, 2, 13, 14, 15})}
OLD_PERM = struct.Struct("<i6H")     # struct ipc_perm (16-bit ids): key, uid, gid, cuid, cgid, mode, seq


def parse_cmd(abi: str, cmd: int, kind: str, old_api: bool = False) -> int:
    """The command without its IPC_64 bit. The direct calls (semctl, msgctl, shmctl) always
    use the IPC_64 layouts (SYSCALL_DEFINE(semctl): ksys_semctl(..., IPC_64)); i386's ipc(2)
    multiplexer (`old_api`) parses the version (ksys_old_semctl: ipc_parse_version), and the
    old layouts (16-bit ids) are not modeled but for semctl's IPC_SET: a command of `kind`
    whose struct differs is EINVAL there without IPC_64 (glibc always passes it); the others
    (semctl's GETALL, SETVAL..., IPC_RMID) mean the same either way."""
    cmd = cmd & 0xFFFFFFFF
    if old_api and abi == "i386" and not cmd & 0x100 and cmd in STRUCT_COMMANDS[kind]:
        raise GuestErrno(E.EINVAL)
    return cmd & ~0x100


def update_old_perm(perm: IpcPerm, raw: bytes) -> None:
    """ipc_update_perm from an old struct ipc_perm (copy_semid_from_user's IPC_OLD case)."""
    _, uid, gid, _, _, mode, _ = OLD_PERM.unpack_from(raw)
    perm.uid, perm.gid = uid, gid
    perm.mode = perm.mode & ~0o777 | mode & 0o777
