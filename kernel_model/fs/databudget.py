"""The overlay's file bytes are guest memory: they count against the run's memory budget.

The in-memory overlay is the sandbox's tmpfs, and a tmpfs file's pages are RAM (mm/shmem.c
charges them to the memory cgroup as the guest's own pages are). So the bytes the overlay holds
(SparseData chunks: only what was written, holes cost nothing) are added to the mapped bytes of
every live address space when the kernel checks its --memory limit, and a write that does not
fit fails as on a full tmpfs: ENOSPC (shmem_get_folio -> -ENOSPC), after whatever already fit
was written (generic_perform_write returns the bytes done). Nothing already written is lost.

`allows(extra)` is the kernel's question "may `extra` more bytes be used, counting everything?"
(Kernel._memory_budget_allows); without a kernel (unit tests of the file system alone) there is
no limit unless one is given.
"""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno


class DataBudget:
    def __init__(self, allows: Callable[[int], bool] | None = None):
        self.used = 0                   # bytes of file data held in memory now
        self.allows = allows

    def charge(self, extra: int) -> None:
        """Take `extra` bytes, or raise ENOSPC and take nothing."""
        if extra <= 0:
            return
        if self.allows is not None and not self.allows(extra):
            raise GuestErrno(E.ENOSPC, "file data over the memory budget")
        self.used += extra

    def release(self, freed: int) -> None:
        self.used -= freed


UNLIMITED = DataBudget()                # for SparseData made outside any file system
