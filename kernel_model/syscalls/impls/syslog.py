"""syslog(2), the kernel log (`klogctl` in the C library; kernel/printk/printk.c do_syslog).

The modeled kernel logs nothing a guest could read: its ring buffer is empty, and stays so.
The guest's root holds CAP_SYSLOG as root does on Linux (LTP's syslog tests run as root and
expect the full interface). check_syslog_permissions: with kernel.dmesg_restrict 0 (Linux's
default without CONFIG_SECURITY_DMESG_RESTRICT) everybody may read the whole buffer (READ_ALL)
and ask its size (SIZE_BUFFER); every other action, unknown ones included, needs CAP_SYSLOG
(or the deprecated CAP_SYS_ADMIN) in effect, else EPERM, before its arguments are looked at.
Then do_syslog's switch: CLOSE and OPEN do nothing; READ and READ_ALL/READ_CLEAR take a buffer
(EINVAL for none or a negative length, 0 for an empty one, EFAULT outside user space), and
copy nothing: READ waits for a record that never comes (until a signal, as syslog_print's
wait_event_interruptible); CLEAR succeeds; CONSOLE_OFF, CONSOLE_ON and CONSOLE_LEVEL (1 to 8,
EINVAL otherwise) change the console's levels (kernel_model/printk.py); SIZE_UNREAD is 0;
another action is EINVAL.
"""
from ... import errno as E
from ...blocking import WouldBlock
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

CLOSE, OPEN, READ, READ_ALL, READ_CLEAR, CLEAR = 0, 1, 2, 3, 4, 5
CONSOLE_OFF, CONSOLE_ON, CONSOLE_LEVEL, SIZE_UNREAD, SIZE_BUFFER = 6, 7, 8, 9, 10
UNRESTRICTED = (READ_ALL, SIZE_BUFFER)      # syslog_action_restricted() without dmesg_restrict
LOG_BUF_LEN = 1 << 17                       # CONFIG_LOG_BUF_SHIFT=17, the default
CAP_SYSLOG = 34


@syscall("syslog", args=(("type", K.INT), ("bufp", K.PTR), ("len", K.INT)))
def sys_syslog(ctx, action, buf, length):
    action, length = ctx.int32(action), ctx.int32(length)
    creds = ctx.proc.creds
    if action not in UNRESTRICTED and not (creds.capable(CAP_SYSLOG)
                                           or creds.capable(CAP_SYS_ADMIN)):
        raise GuestErrno(E.EPERM)
    if action in (CLOSE, OPEN, CLEAR, SIZE_UNREAD):
        return 0
    if action == CONSOLE_OFF:
        ctx.kernel.console_levels.console_off()
        return 0
    if action == CONSOLE_ON:
        ctx.kernel.console_levels.console_on()
        return 0
    if action in (READ, READ_ALL, READ_CLEAR):
        return _read(ctx, action, buf, length)
    if action == CONSOLE_LEVEL:
        if not 1 <= length <= 8:
            raise GuestErrno(E.EINVAL)
        ctx.kernel.console_levels.set_console(length)
        return 0
    if action == SIZE_BUFFER:
        return LOG_BUF_LEN
    raise GuestErrno(E.EINVAL)


def _read(ctx, action: int, buf: int, length: int) -> int:
    if not buf or length < 0:
        raise GuestErrno(E.EINVAL)
    if length == 0:
        return 0
    if buf + length > ctx.proc.vm.layout.user_top:     # access_ok(): a user-space range
        raise GuestErrno(E.EFAULT)
    if action == READ:
        raise WouldBlock(("syslog", ctx.thread.tid), "syslog")   # no record ever comes
    return 0                                     # the buffer is empty: nothing is copied
