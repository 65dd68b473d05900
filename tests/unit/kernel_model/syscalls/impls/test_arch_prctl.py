"""arch_prctl refuses an FS/GS base at or above TASK_SIZE_MAX (EPERM, do_arch_prctl_64): the
fuzzer's all-ones and kernel-half bases were accepted; the i386 ABI has no such codes. Both
ABIs share the CPUID codes (do_arch_prctl_common: LTP arch_prctl01 got EINVAL for them)."""
import struct

import pytest

from emu.cpuid import linux_flags
from kernel_model import errno as E

from ...call_script import run_script

ARCH_SET_GS, ARCH_SET_FS, ARCH_GET_FS, ARCH_GET_GS = 0x1001, 0x1002, 0x1003, 0x1004
ARCH_GET_CPUID, ARCH_SET_CPUID = 0x1011, 0x1012
TASK_SIZE_MAX = 0x7FFF_FFFF_F000


def test_bases_must_be_user_addresses():
    results, buf, _ = run_script("x86_64", [
        ("arch_prctl", ARCH_SET_FS, 2**64 - 1), ("arch_prctl", ARCH_SET_GS, 0xFFFF_8000_0000_0000),
        ("arch_prctl", ARCH_SET_FS, TASK_SIZE_MAX), ("arch_prctl", ARCH_SET_GS, TASK_SIZE_MAX - 1),
        ("arch_prctl", ARCH_GET_GS, "BUF"), ("arch_prctl", ARCH_SET_GS, 0),
        ("arch_prctl", 0x9999, 0)])
    assert results == [-E.EPERM, -E.EPERM, -E.EPERM, 0, 0, 0, -E.EINVAL]
    assert struct.unpack_from("<Q", buf)[0] == TASK_SIZE_MAX - 1


def test_the_i386_abi_has_no_fs_base_codes():
    assert run_script("i386", [("arch_prctl", ARCH_SET_FS, 0x1000)])[0] == [-E.EINVAL]


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_cpuid_stays_enabled_on_a_cpu_without_cpuid_faulting(abi):
    """/proc/cpuinfo lists no cpuid_fault, so CPUID is on (1) and cannot be turned off or on
    (ENODEV: set_cpuid_mode without X86_FEATURE_CPUID_FAULT), as LTP arch_prctl01 expects."""
    assert "cpuid_fault" not in linux_flags()
    results, _, _ = run_script(abi, [("arch_prctl", ARCH_GET_CPUID, 0), ("arch_prctl", ARCH_SET_CPUID, 0),
                                     ("arch_prctl", ARCH_SET_CPUID, 1), ("arch_prctl", ARCH_GET_CPUID, 0)])
    assert results == [1, -E.ENODEV, -E.ENODEV, 1]
