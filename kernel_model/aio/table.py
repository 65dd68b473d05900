"""The AIO contexts of one address space (mm->ioctx_table) and the system-wide count of their
requests (fs/aio.c aio_nr, limited by the fs.aio-max-nr sysctl).

A context is found from its aio_context_t as lookup_ioctx finds it: the id is read from the
ring's first word in user memory (an address that cannot be read is no context), then the
table's slot of that id must hold a live context whose ring is at that very address.
"""
from .ring import KioCtx

AIO_MAX_NR = 0x10000          # fs/aio.c aio_max_nr's default (65536)


class AioLimits:
    """fs.aio-nr (requests of every live context) and fs.aio-max-nr, kernel-wide."""

    def __init__(self):
        self.aio_nr = 0
        self.aio_max_nr = AIO_MAX_NR


class AioTable:
    def __init__(self, limits: AioLimits):
        self.limits = limits
        self.slots: list[KioCtx | None] = []

    def add(self, kioctx: KioCtx) -> None:
        """ioctx_add_table: the first free slot is the context's id, written in its ring."""
        free = [i for i, slot in enumerate(self.slots) if slot is None]
        kioctx.id = free[0] if free else len(self.slots)
        if free:
            self.slots[kioctx.id] = kioctx
        else:
            self.slots.append(kioctx)
        kioctx.write_header()

    def lookup(self, ctx_id: int, ring_id: int | None) -> KioCtx | None:
        """lookup_ioctx, given the id read at `ctx_id` (None when it could not be read)."""
        if ring_id is None or ring_id >= len(self.slots):
            return None
        kioctx = self.slots[ring_id]
        if kioctx is None or kioctx.dead or kioctx.user_id != ctx_id:
            return None
        return kioctx

    def kill(self, kioctx: KioCtx) -> None:
        """kill_ioctx: out of the table and of aio_nr; its pending requests end unreaped."""
        self.slots[kioctx.id] = None
        self.limits.aio_nr -= kioctx.max_reqs
        kioctx.release()

    def release(self) -> None:
        """exit_aio: the address space goes, with every context still in it."""
        for kioctx in self.slots:
            if kioctx is not None:
                self.kill(kioctx)
