"""memfd_create(2)'s files (mm/memfd.c): memory files of the /dev/shm tmpfs that no directory
names, and their seals.

A memfd is an overlay file of the shm mount never linked anywhere; its path in /proc is
"/memfd:NAME (deleted)". Seals (F_ADD_SEALS/F_GET_SEALS) are kept on the inode and enforced
where its bytes change: F_SEAL_WRITE and F_SEAL_FUTURE_WRITE refuse writes (EPERM) and shared
writable maps, F_SEAL_SHRINK and F_SEAL_GROW refuse a size going down or up (EPERM), F_SEAL_SEAL
refuses further seals. A memfd made without MFD_ALLOW_SEALING starts with F_SEAL_SEAL.
"""
from .. import errno as E
from ..errno import GuestErrno
from .overlay import OverlayFile

F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE = 0x1, 0x2, 0x4, 0x8
F_SEAL_FUTURE_WRITE, F_SEAL_EXEC = 0x10, 0x20
ALL_SEALS = 0x3F
NO_WRITES = F_SEAL_WRITE | F_SEAL_FUTURE_WRITE
O_LARGEFILE = 0o100000               # a memfd's description is O_RDWR | O_LARGEFILE


class MemFile(OverlayFile):
    """An overlay file with seals (every memfd is one)."""

    seals = 0

    def write_at(self, offset: int, data: bytes) -> int:
        if data and self.seals & NO_WRITES:
            raise GuestErrno(E.EPERM)
        if self.seals & F_SEAL_GROW and offset + len(data) > self.size():
            raise GuestErrno(E.EPERM)          # shmem_write_begin: no growing
        return super().write_at(offset, data)

    def write_back_at(self, offset: int, data: bytes) -> int:
        """The page cache's write-back of shared pages: not a writer, so no seal applies."""
        return super().write_at(offset, data)

    def truncate(self, length: int) -> None:
        size = self.size()
        if (length < size and self.seals & F_SEAL_SHRINK) or \
                (length > size and self.seals & F_SEAL_GROW):
            raise GuestErrno(E.EPERM)
        super().truncate(length)

    def add_seals(self, seals: int, writable: bool) -> None:
        """memfd_add_seals(): the description must be writable (EPERM), the seals known
        (EINVAL), F_SEAL_SEAL not yet set (EPERM)."""
        if not writable:
            raise GuestErrno(E.EPERM)
        if seals & ~ALL_SEALS:
            raise GuestErrno(E.EINVAL)
        if self.seals & F_SEAL_SEAL:
            raise GuestErrno(E.EPERM)
        self.seals |= seals
