"""syslog(2), the kernel log (`klogctl` in the C library; kernel/printk/printk.c do_syslog).

The modeled kernel logs nothing a guest could read: its ring buffer is empty. The guest is
root in its own user namespace, without CAP_SYSLOG in the initial one, and kernel.dmesg_restrict
is 0 (Linux's default without CONFIG_SECURITY_DMESG_RESTRICT): syslog_action_restricted() lets
everybody read the whole buffer (READ_ALL) and ask its size (SIZE_BUFFER), and every other
action — unknown ones included, the permission check comes first — is EPERM.
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

SYSLOG_ACTION_READ_ALL, SYSLOG_ACTION_SIZE_BUFFER = 3, 10
LOG_BUF_LEN = 1 << 17           # CONFIG_LOG_BUF_SHIFT=17, the default


@syscall("syslog", args=(("type", K.INT), ("bufp", K.PTR), ("len", K.INT)))
def sys_syslog(ctx, action, buf, length):
    action, length = ctx.int32(action), ctx.int32(length)
    if action == SYSLOG_ACTION_SIZE_BUFFER:
        return LOG_BUF_LEN
    if action != SYSLOG_ACTION_READ_ALL:
        raise GuestErrno(E.EPERM)
    if not buf or length < 0:
        raise GuestErrno(E.EINVAL)
    if length == 0:
        return 0
    if buf + length > ctx.proc.vm.layout.user_top:     # access_ok(): a user-space range
        raise GuestErrno(E.EFAULT)
    return 0                                     # the buffer is empty: nothing is copied
