"""capget(2) (kernel/capability.c): the capability sets of a task.

Every guest task is root in the sandbox's own user namespace, where root holds every
capability: effective and permitted are all of CAP_CHOWN..CAP_CHECKPOINT_RESTORE (Linux 6.1's
CAP_LAST_CAP, 40) and inheritable is empty, which is what capget reports in a user namespace.
What the sandbox refuses (devices, clocks, mounts...) it refuses because those capabilities
are checked against the initial namespace (see statfs.py, clockset.py, admin.py). capset is
not modeled: the permission checks do not follow a dropped capability, so dropping one would
be a promise the sandbox cannot keep.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from .sched_policy import find_task

VERSION_1, VERSION_2, VERSION_3 = 0x19980330, 0x20071026, 0x20080522
CAP_LAST_CAP = 40
ALL_CAPS = (1 << (CAP_LAST_CAP + 1)) - 1


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
    if pid != 0 and pid != ctx.proc.pid:
        find_task(ctx, pid)              # ESRCH; every guest task has the same sets
    words = 1 if version == VERSION_1 else 2
    data = b"".join(struct.pack("<III", ALL_CAPS >> (32 * i) & 0xFFFFFFFF,
                                ALL_CAPS >> (32 * i) & 0xFFFFFFFF, 0) for i in range(words))
    ctx.write(dataptr, data)
    return 0
