"""F_SETLEASE/F_GETLEASE on both ABIs, Linux's answers to a refused lease: EAGAIN for a write
lease beside another open of the file or a read lease while it is open for writing
(check_conflicting_open), EAGAIN to remove none, EINVAL off regular files or for a bad type,
EACCES for a file the caller does not own; F_GETLEASE says F_UNLCK. They were EINVAL, an
unknown command (LTP fcntl24, fcntl32 in the every-15th sample). Granted leases and their
breaks: tests/e2e/run/test_leases.py."""
from kernel_model import errno as E

from ...call_script import run_script

F_SETLEASE, F_GETLEASE = 1024, 1025
F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2
O_RDONLY, O_RDWR = 0, 2


def test_conflicting_leases_are_refused_as_linux_refuses_them(arch):
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDWR), ("open", "/d", O_RDONLY), ("open", "/f", O_RDONLY),
        (fcntl, 3, F_SETLEASE, F_WRLCK),
        (fcntl, 5, F_SETLEASE, F_RDLCK),
        (fcntl, 3, F_SETLEASE, F_UNLCK),
        (fcntl, 3, F_GETLEASE, 0),
        (fcntl, 4, F_SETLEASE, F_RDLCK),
        (fcntl, 3, F_SETLEASE, 7),
        (setresuid, 1000, 1000, 1000),
        (fcntl, 5, F_SETLEASE, F_RDLCK),
    ])
    assert results == [3, 4, 5, -E.EAGAIN, -E.EAGAIN, -E.EAGAIN, F_UNLCK, -E.EINVAL, -E.EINVAL,
                       0, -E.EACCES]
