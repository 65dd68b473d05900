"""/dev/shm: the tmpfs where POSIX shared memory lives (shm_open(3) names are files there).

Linux mounts a tmpfs on /dev/shm (mm/shmem.c): an empty, world-writable, sticky directory whose
files are memory only. Here it is an overlay directory with nothing under it (its files are the
overlay's in-memory ones, in the same data budget) and a device number of its own, so that its
inodes never share a (st_dev, st_ino) identity — the page cache's key (memory/page_cache.py) —
with a rootfs file. A shared mapping of one of its files is MAP_SHARED memory like any file's.
"""
from dataclasses import dataclass
from typing import Callable

from .constants import S_IFDIR, makedev
from .databudget import DataBudget
from .inodes import InodeTable
from .overlay import OverlayContext, OverlayDir
from .records import Meta, new_meta

SHM_DEV = makedev(0, 24)       # an anonymous device number, as a tmpfs mount gets one
SHM_MODE = S_IFDIR | 0o1777


@dataclass
class ShmContext(OverlayContext):
    mount: str = "shm"             # rename(2) and link(2) to or from another mount are EXDEV

    def meta(self, mode: int, nlink: int = 1) -> Meta:
        return new_meta(SHM_DEV, self.table.fresh(), mode, self.clock(), nlink)


def build_shm(clock: Callable[[], int], budget: DataBudget) -> OverlayDir:
    ctx = ShmContext(InodeTable(first=1), clock, budget)
    return OverlayDir(ctx, ctx.meta(SHM_MODE, nlink=2), None)
