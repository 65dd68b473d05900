"""System V shared memory segments (ipc/shm.c): their pages and who has them attached.

A segment's pages are SharedPages (emu/shared_pages.py), the same shared memory MAP_SHARED
maps: shmat maps them into the caller, so every attachment, in any process, sees one copy.
The segment holds its pages itself (a segment outlives its attachments until IPC_RMID), and
IPC_RMID of an attached segment only marks it (SHM_DEST, its key IPC_PRIVATE) until the last
detach. The pages are allocated at the first shmat: shmget alone takes no memory, as tmpfs
pages come when touched.
"""
from dataclasses import dataclass

from emu.shared_pages import SharedPages

from .ids import IpcIds, IpcPerm

PAGE = 4096
SHMMIN = 1
SHMSEG = 4096           # include/uapi/linux/shm.h SHMSEG (= SHMMNI): IPC_INFO's shmseg, fixed
SHM_DEST, SHM_LOCKED = 0o1000, 0o2000


@dataclass(eq=False)
class Segment:
    perm: IpcPerm
    size: int
    ctime: int
    cpid: int
    atime: int = 0
    dtime: int = 0
    lpid: int = 0
    nattch: int = 0
    pages: SharedPages | None = None

    @property
    def mapped_size(self) -> int:
        return (self.size + PAGE - 1) // PAGE * PAGE

    def backing(self):
        """The pieces vm.mmap maps for an attachment: the whole segment."""
        if self.pages is None:
            self.pages = SharedPages(self.mapped_size)
            self.pages.hold()                   # the segment's own hold, dropped at destroy
        return lambda size: [(self.pages, 0, size)]

    def destroy(self) -> None:
        if self.pages is not None:
            self.pages.drop()
            self.pages = None


def new_segments(shmmni) -> IpcIds:
    return IpcIds(shmmni)

