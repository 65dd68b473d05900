"""ustat, sysfs, vhangup and readahead: ENOSYS before (LTP ustat02, sysfs04, vhangup01 and
readahead01 broke or TCONF'd on it)."""
from kernel_model import errno as E
from kernel_model.fs.constants import O_RDONLY, O_WRONLY, ROOTFS_DEV
from kernel_model.syscalls.impls.fstypes import FILESYSTEMS
from tests.unit.kernel_model.call_script import run_script


def test_ustat_answers_for_a_mounted_device_only(arch):
    results, _, _ = run_script(arch, [
        ("ustat", ROOTFS_DEV, "BUF"),
        ("ustat", 0xFFFFFFFF, "BUF"),
        ("ustat", ROOTFS_DEV, "RO"),
    ])
    assert results == [0, -E.EINVAL, -E.EFAULT]


def test_sysfs_names_and_counts_the_file_system_types(arch):
    results, buf, _ = run_script(arch, [
        ("sysfs", 1, "BUF"),
        ("sysfs", 2, FILESYSTEMS.index(b"proc"), "BUF+64"),
        ("sysfs", 3),
        ("sysfs", 2, len(FILESYSTEMS), "BUF+64"),
        ("sysfs", 1, "BUF+32"),
        ("sysfs", 100),
    ], data=b"proc\0" + bytes(27) + b"ext9\0")
    assert results == [FILESYSTEMS.index(b"proc"), 0, len(FILESYSTEMS), -E.EINVAL, -E.EINVAL,
                       -E.EINVAL]
    assert buf[64:69] == b"proc\0"


def test_vhangup_needs_cap_sys_tty_config(arch):
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        ("vhangup",),
        (setresuid, 65534, 65534, 65534),
        ("vhangup",),
    ])
    assert results == [0, 0, -E.EPERM]


def test_readahead_wants_a_regular_file_open_for_reading(arch):
    offset = (0, 0) if arch == "i386" else (0,)
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDONLY),
        ("readahead", "@0", *offset, 4096),
        ("open", "/f", O_WRONLY),
        ("readahead", "@2", *offset, 4096),
        ("pipe", "BUF"),
        ("readahead", 5, *offset, 4096),          # the pipe's read end (3 and 4 are /f's)
        ("readahead", 99, *offset, 4096),
    ])
    assert results[0] == 3 and results[2] == 4 and results[4] == 0
    assert [results[1], results[3], results[5], results[6]] == [0, -E.EBADF, -E.EINVAL, -E.EBADF]
