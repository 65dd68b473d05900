"""reboot(2)'s checks in kernel/reboot.c's order: CAP_SYS_BOOT, the magic numbers, the command.
Root may set what Ctrl-Alt-Del does (LTP reboot01; before, every reboot call was EPERM), the
machine-ending commands stay refused, an unknown command is EINVAL (LTP reboot02) and a
process without CAP_SYS_BOOT gets EPERM before any other check."""
from kernel_model import errno as E

from ...call_script import run_script

MAGIC1, MAGIC2, MAGIC2C = 0xFEE1DEAD, 672274793, 537993216
CAD_ON, CAD_OFF, POWER_OFF, RESTART = 0x89ABCDEF, 0, 0x4321FEDC, 0x01234567
KEEP, NOBODY = 0xFFFFFFFF, 65534


def test_root_sets_ctrl_alt_del_and_may_not_end_the_machine(arch):
    results, _, _ = run_script(arch, [
        ("reboot", MAGIC1, MAGIC2, CAD_ON, 0), ("reboot", MAGIC1, MAGIC2C, CAD_OFF, 0),
        ("reboot", MAGIC1, MAGIC2, 0x12345678, 0), ("reboot", MAGIC1, 1, CAD_ON, 0),
        ("reboot", 1, MAGIC2, CAD_ON, 0), ("reboot", MAGIC1, MAGIC2, POWER_OFF, 0),
        ("reboot", MAGIC1, MAGIC2, RESTART, 0)])
    assert results == [0, 0, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EPERM, -E.EPERM]


def test_without_cap_sys_boot_every_call_is_eperm_first(arch):
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        (setresuid, KEEP, NOBODY, KEEP), ("reboot", MAGIC1, MAGIC2, CAD_ON, 0),
        ("reboot", 1, 2, 0x12345678, 0), (setresuid, KEEP, 0, KEEP),
        ("reboot", MAGIC1, MAGIC2, CAD_OFF, 0)])
    assert results == [0, -E.EPERM, -E.EPERM, 0, 0]
