"""A path in a page the process may not read is EFAULT (strncpy_from_user), not an empty path
(LTP fchmodat02, link04 pass a PROT_NONE page); fchmod works on the open file whatever the
path to it (LTP fchmod03: the file's folder is not searchable by the caller). Both ABIs."""
from kernel_model import errno as E

from ...call_script import run_script

PAGE = 0x50000000
PROT_NONE, MAP_PRIVATE_ANON_FIXED = 0, 0x32
O_CREAT, O_WRONLY = 0o100, 1


def test_a_path_in_an_unreadable_page_is_efault(arch):
    at_fdcwd = (1 << (32 if arch == "i386" else 64)) - 100
    minus_one = (1 << (32 if arch == "i386" else 64)) - 1
    results, _, _ = run_script(arch, [
        ("mmap" if arch == "x86_64" else "mmap2", PAGE, 4096, PROT_NONE, MAP_PRIVATE_ANON_FIXED,
         minus_one, 0),
        ("chmod", PAGE, 0o644),
        ("link", PAGE, "/tmp/new"),
        ("link", "/f", PAGE),
        ("fchmodat", at_fdcwd, PAGE, 0o644),
        ("chmod", "/f", 0o644),
    ])
    assert results == [PAGE, -E.EFAULT, -E.EFAULT, -E.EFAULT, -E.EFAULT, 0]


def test_fchmod_needs_no_path(arch):
    data = b"/tmp/closed\0/tmp/closed/file\0"
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        ("chmod", "/", 0o755),
        ("mkdir", "BUF", 0o777),
        ("open", "BUF+12", O_CREAT | O_WRONLY, 0o644),       # 3
        ("chmod", "BUF", 0o700),                             # root's, closed to others
        ("fchown" if arch == "x86_64" else "fchown32", 3, 1000, 1000),
        (setresuid, 1000, 1000, 1000),
        ("chmod", "BUF+12", 0o777),                          # the path is closed
        ("fchmod", 3, 0o777),                                # the file is its own
    ], data=data)
    assert results == [0, 0, 3, 0, 0, 0, -E.EACCES, 0]


def test_a_buffer_in_an_unreadable_page_is_efault(arch):
    """copy_from_user faults on PROT_NONE as strncpy_from_user does: write(2) from it, and
    semctl(IPC_SET) reading its struct from it (LTP semctl03 'invalid union arg')."""
    minus_one = (1 << (32 if arch == "i386" else 64)) - 1
    results, _, _ = run_script(arch, [
        ("mmap" if arch == "x86_64" else "mmap2", PAGE, 4096, PROT_NONE, MAP_PRIVATE_ANON_FIXED,
         minus_one, 0),
        ("write", 1, PAGE, 4),
        ("semget", 0, 1, 0o600),
        ("semctl", 0, 0, 1 | 0x100, PAGE),          # IPC_SET | IPC_64
        ("semctl", 0, 0, 13 | 0x100, PAGE),         # GETALL
        ("write", 1, "BUF", 0),
    ])
    assert results == [PAGE, -E.EFAULT, 0, -E.EFAULT, -E.EFAULT, 0]
