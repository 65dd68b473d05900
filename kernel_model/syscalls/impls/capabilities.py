"""capget(2) and capset(2) (kernel/capability.c, security/commoncap.c cap_capset).

A guest task starts as root, which holds every capability (creds.py's model of privilege):
effective and permitted are all of CAP_CHOWN..CAP_CHECKPOINT_RESTORE (Linux 6.1's
CAP_LAST_CAP, 40) and inheritable is empty. The sets then follow the task's ids and capset
(creds.py); the checks that read them see a dropped capability as gone. What the sandbox
refuses whatever the sets (clocks, mounts, ending the machine...) it refuses as a security
module would (creds.py; clockset.py, admin.py, reboot.py).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from ...creds import ALL_CAPS, CAP_SETPCAP, ROOT
from .sched_policy import find_task

VERSION_1, VERSION_2, VERSION_3 = 0x19980330, 0x20071026, 0x20080522


@syscall("capget", args=(("hdrp", K.PTR), ("datap", K.PTR)))
def sys_capget(ctx, header, dataptr):
    version = struct.unpack("<I", ctx.read(header, 4))[0]      # cap_validate_magic()
    if version not in (VERSION_1, VERSION_2, VERSION_3):
        ctx.write(header, struct.pack("<I", VERSION_3))
        if not dataptr:
            return 0                     # a probe for the preferred version
        raise GuestErrno(E.EINVAL)
    if not dataptr:
        return 0
    pid = struct.unpack("<i", ctx.read(header + 4, 4))[0]
    if pid < 0:
        raise GuestErrno(E.EINVAL)
    creds = ctx.proc.creds if pid in (0, ctx.proc.pid) else _creds_of(find_task(ctx, pid))
    words = 1 if version == VERSION_1 else 2
    data = b"".join(struct.pack("<III", creds.effective >> (32 * i) & 0xFFFFFFFF,
                                creds.permitted >> (32 * i) & 0xFFFFFFFF,
                                creds.inheritable >> (32 * i) & 0xFFFFFFFF) for i in range(words))
    ctx.write(dataptr, data)
    return 0


def _creds_of(task):
    process = getattr(task, "process", None)     # the virtual init has none: root's sets
    return getattr(process, "creds", ROOT)


def _version_words(ctx, header) -> int:
    """cap_validate_magic(): the 32-bit words of each set; an unknown version is EINVAL and
    the header is rewritten with the preferred one."""
    version = struct.unpack("<I", ctx.read(header, 4))[0]
    if version not in (VERSION_1, VERSION_2, VERSION_3):
        ctx.write(header, struct.pack("<I", VERSION_3))
        raise GuestErrno(E.EINVAL)
    return 1 if version == VERSION_1 else 2


@syscall("capset", args=(("hdrp", K.PTR), ("datap", K.PTR)))
def sys_capset(ctx, header, dataptr):
    """Only the caller's own sets (another pid is EPERM); the new inheritable set within the
    old inheritable and permitted ones unless CAP_SETPCAP, and within the old inheritable and
    the bounding set (prctl's PR_CAPBSET_DROP) always, permitted within the old permitted,
    effective within the new permitted (cap_capset), else EPERM."""
    words = _version_words(ctx, header)
    pid = struct.unpack("<i", ctx.read(header + 4, 4))[0]
    if pid != 0 and pid != ctx.proc.pid:
        raise GuestErrno(E.EPERM)
    raw = ctx.read(dataptr, 12 * words)
    sets = [0, 0, 0]
    for i in range(words):
        for j, value in enumerate(struct.unpack_from("<III", raw, 12 * i)):
            sets[j] |= value << (32 * i)
    effective, permitted, inheritable = (value & ALL_CAPS for value in sets)
    old = ctx.proc.creds
    if not old.capable(CAP_SETPCAP) and inheritable & ~(old.inheritable | old.permitted):
        raise GuestErrno(E.EPERM)
    if inheritable & ~(old.inheritable | ctx.thread.task_flags.capbset):
        raise GuestErrno(E.EPERM)           # nothing new from outside the bounding set
    if permitted & ~old.permitted or effective & ~permitted:
        raise GuestErrno(E.EPERM)
    ctx.proc.creds = old.with_sets(effective, permitted, inheritable)
    return 0
