"""vhangup (fs/open.c): hang up the caller's controlling terminal. CAP_SYS_TTY_CONFIG is needed
(EPERM otherwise); the sandbox's processes have no controlling terminal (their stdio are pipes
and the host's files), so with the capability there is nothing to hang up and the call
succeeds, as Linux's tty_vhangup_self does without a tty."""
from ... import errno as E
from ...errno import GuestErrno
from ..registry import syscall

CAP_SYS_TTY_CONFIG = 26


@syscall("vhangup", args=())
def sys_vhangup(ctx):
    if not ctx.proc.creds.capable(CAP_SYS_TTY_CONFIG):
        raise GuestErrno(E.EPERM)
    return 0
