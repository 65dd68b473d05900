"""arch_prctl refuses an FS/GS base at or above TASK_SIZE_MAX (EPERM, do_arch_prctl_64): the
fuzzer's all-ones and kernel-half bases were accepted; the i386 ABI has no such codes."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

ARCH_SET_GS, ARCH_SET_FS, ARCH_GET_FS, ARCH_GET_GS = 0x1001, 0x1002, 0x1003, 0x1004
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
