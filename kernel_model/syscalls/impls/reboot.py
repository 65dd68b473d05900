"""reboot(2) (kernel/reboot.c), in its order: CAP_SYS_BOOT (EPERM), the magic numbers (EINVAL),
then the command.

The guest's root holds CAP_SYS_BOOT, so it may say what Ctrl-Alt-Del does (CAD_ON, CAD_OFF):
the call succeeds, and as no Ctrl-Alt-Del ever reaches the sandbox the setting has nothing to
change. Restarting, halting, powering off, kexec and suspend would end the machine, which the
sandbox does not let a guest do: EPERM, refused by the sandbox whatever the capabilities
(creds.py's model of privilege). An unknown
command is EINVAL (the switch's default).
"""
from ... import errno as E
from ...creds import CAP_SYS_BOOT
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

LINUX_REBOOT_MAGIC1 = 0xFEE1DEAD
LINUX_REBOOT_MAGIC2S = (672274793, 85072278, 369367448, 537993216)   # MAGIC2, 2A, 2B, 2C
LINUX_REBOOT_CMD_CAD_ON, LINUX_REBOOT_CMD_CAD_OFF = 0x89ABCDEF, 0x00000000
# RESTART, HALT, POWER_OFF, RESTART2, SW_SUSPEND, KEXEC
MACHINE_ENDING = (0x01234567, 0xCDEF0123, 0x4321FEDC, 0xA1B2C3D4, 0xD000FCE2, 0x45584543)


@syscall("reboot", args=(("magic1", K.HEX), ("magic2", K.HEX), ("cmd", K.HEX), ("arg", K.PTR)))
def sys_reboot(ctx, magic1, magic2, cmd, arg):
    if not ctx.proc.creds.capable(CAP_SYS_BOOT):
        raise GuestErrno(E.EPERM)
    magic1, magic2, cmd = magic1 & 0xFFFFFFFF, ctx.int32(magic2), cmd & 0xFFFFFFFF
    if magic1 != LINUX_REBOOT_MAGIC1 or magic2 not in LINUX_REBOOT_MAGIC2S:
        raise GuestErrno(E.EINVAL)
    if cmd in (LINUX_REBOOT_CMD_CAD_ON, LINUX_REBOOT_CMD_CAD_OFF):
        return 0
    if cmd in MACHINE_ENDING:
        raise GuestErrno(E.EPERM)
    raise GuestErrno(E.EINVAL)
