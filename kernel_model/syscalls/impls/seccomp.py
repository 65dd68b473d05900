"""seccomp(2) (kernel/seccomp.c do_seccomp; the work is kernel_model/seccomp/install.py)."""
from ...seccomp.install import do_seccomp
from ..kinds import K
from ..registry import syscall


@syscall("seccomp", args=(("operation", K.UINT), ("flags", K.HEX), ("args", K.PTR)))
def sys_seccomp(ctx, operation, flags, args):
    return do_seccomp(ctx, operation & 0xFFFF_FFFF, flags & 0xFFFF_FFFF, args)
