"""sigaltstack checks its new stack as do_sigaltstack does (EINVAL for an unknown mode, ENOMEM
under MINSIGSTKSZ; both were accepted: LTP sigaltstack02) and reports a disabled one as
SS_DISABLE; tgkill and tkill refuse ids <= 0 with EINVAL (ESRCH before: LTP tgkill03)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

SS_DISABLE, MINSIGSTKSZ = 2, 2048
OWN_PID = 100


def _stack_t(arch: str, sp: int, flags: int, size: int) -> bytes:
    return struct.pack("<III", sp, flags, size) if arch == "i386" else struct.pack("<QI4xQ", sp, flags, size)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sigaltstack_checks_the_new_stack(arch):
    data = b"".join(s.ljust(32, b"\0") for s in (
        _stack_t(arch, 0x5000, 7, 8192),                 # no such mode
        _stack_t(arch, 0x5000, 0, MINSIGSTKSZ - 1),      # too small
        _stack_t(arch, 0x5000, 0, 8192)))
    results, buf, _ = run_script(arch, [
        ("sigaltstack", 0, "BUF+96"),                    # none yet: SS_DISABLE
        ("sigaltstack", "BUF", 0),
        ("sigaltstack", "BUF+32", 0),
        ("sigaltstack", "BUF+64", "BUF+128"),
        ("sigaltstack", 0, "BUF+160"),
    ], data=data)
    assert results == [0, -E.EINVAL, -E.ENOMEM, 0, 0]
    assert buf[96:].startswith(_stack_t(arch, 0, SS_DISABLE, 0))
    assert buf[160:].startswith(_stack_t(arch, 0x5000, 0, 8192))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_tgkill_and_tkill_refuse_ids_that_are_not_positive(arch):
    results, _, _ = run_script(arch, [
        ("tgkill", -1, OWN_PID, 0), ("tgkill", OWN_PID, 0, 0), ("tkill", -1, 0),
        ("tgkill", OWN_PID, OWN_PID + 5, 0), ("tgkill", OWN_PID, OWN_PID, 0)])
    assert results == [-E.EINVAL, -E.EINVAL, -E.EINVAL, -E.ESRCH, 0]
