"""What a file description that is a stream, not a file, answers to the calls that need a
position or a directory: pipes and fifos, the terminal's stdio, epoll and eventfd descriptors,
sockets. Linux gives them no_llseek (ESPIPE for lseek, pread and pwrite: fs/read_write.c,
ksys_pread64 checks FMODE_PREAD), ftruncate's EINVAL for anything not a regular file
(do_sys_ftruncate) and getdents' ENOTDIR (iterate_dir without ->iterate_shared).
"""
from .. import errno as E
from ..errno import GuestErrno


class Unseekable:
    """The base of every stream-like open file: the five answers above, in one place."""

    def pread(self, n: int, off: int) -> bytes:
        raise GuestErrno(E.ESPIPE)

    def pwrite(self, data: bytes, off: int) -> int:
        raise GuestErrno(E.ESPIPE)

    def seek(self, off: int, whence: int) -> int:
        raise GuestErrno(E.ESPIPE)

    def truncate(self, length: int) -> None:
        raise GuestErrno(E.EINVAL)

    def getdents(self, limit: int | None = None):
        raise GuestErrno(E.ENOTDIR)
