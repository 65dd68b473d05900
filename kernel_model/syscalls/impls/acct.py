"""acct(2) (kernel/acct.c): process accounting on (a file's name) or off (NULL), root's alone
(CAP_SYS_PACCT: EPERM first). The file is opened for appending as file_open_name opens it,
with open(2)'s errors; one that is not a regular file is EACCES (acct_on). Its records are
written at each process's exit (process/acct.py)."""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_LARGEFILE
from ...fs.constants import O_APPEND, O_WRONLY, S_IFMT, S_IFREG
from ...process.acct import Accounting
from ..kinds import K
from ..registry import syscall
from .paths import base_dir, fs_view, guarded_fs

CAP_SYS_PACCT = 20
AT_FDCWD = -100


@syscall("acct", args=(("filename", K.PATH),))
def sys_acct(ctx, filename):
    if not ctx.proc.creds.capable(CAP_SYS_PACCT):
        raise GuestErrno(E.EPERM)
    kernel = ctx.kernel
    if not filename:
        _switch(kernel, None)                           # acct_off
        return 0
    path = ctx.read_path(filename)
    f = guarded_fs(ctx).open(path, O_WRONLY | O_APPEND | O_LARGEFILE, 0,
                             base_dir(ctx, AT_FDCWD, path), fs_view(ctx))
    if f.stat().mode & S_IFMT != S_IFREG:
        f.close()
        raise GuestErrno(E.EACCES)
    _switch(kernel, Accounting(f))
    return 0


def _switch(kernel, accounting) -> None:
    """The new file (or none) replaces the old, which is closed."""
    old = getattr(kernel, "acct", None)
    kernel.acct = accounting
    if old is not None:
        old.close()
