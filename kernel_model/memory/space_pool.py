"""A pool of released Machines, kept for the code they translated.

A new Unicorn instance starts with an empty translation cache, and translating is most of what
a short-lived process costs here: `busybox true` runs ~800 new blocks, so every fork and every
exec of a shell loop paid for re-translating code that the process before it had translated
already (docs/benchmarks.md, "Processes at scale"). Unicorn cannot share translations between
instances, but an instance keeps them as long as the pages they came from stay mapped and
unchanged (QEMU invalidates a block only on a write to its page or an unmap of it).

So when the kernel frees an address space, its Machine may come here instead of being closed:
every user mapping is unmapped except the executable areas (the text), the CPU is reset to a
new one's state, and the next exec or fork whose executable areas cover the same ranges with
the same permissions takes it. The new owner then makes the kept text hold exactly what it
needs (Memory.sync writes only pages that differ, and drops only their translations), so a
recycled Machine is indistinguishable from a new one to the guest: same bytes, same zeroed
registers, the rest unmapped. Only the time differs.

The pool is small (POOL_SIZE Machines, least recently released dropped first, each holding host
memory for its text and translations) so memory stays bounded.
"""
from collections import namedtuple

from .vm import PROT_EXEC, Vma

POOL_SIZE = 4
VDSO = b"[vdso]"

RecycledMachine = namedtuple("RecycledMachine", "machine kept")   # kept: tuple of Vma


def code_areas(vmas) -> tuple[tuple[int, int, int], ...]:
    """(start, end, perms) of every executable area, in address order: the pool's key. The
    vDSO is left out (unmapped like data): exec maps it after the program and its interpreter
    (kernel_model/vdso/mapping.py), so an exec asks for the program's text alone."""
    return tuple((v.start, v.end, v.perms) for v in vmas if v.perms & PROT_EXEC and v.name != VDSO)


class SpacePool:
    def __init__(self, size: int = POOL_SIZE):
        self.size = size
        self._machines: list[tuple[str, tuple, RecycledMachine]] = []   # oldest first
        self.recycled = 0            # how many Machines were taken again (for bench/ and tests)

    def keep(self, space) -> bool:
        """Take the Machine of `space` (just released by the kernel, not running) if its text
        can be kept; False: the caller closes it."""
        if self.size <= 0 or space.machine is None:
            return False
        areas = code_areas(space.vm.vmas)
        pieces = set(space.machine.mem.pieces())
        if not areas or any((start, end) not in pieces for start, end, _ in areas):
            return False            # no text, or an area mprotect split from its mapping
        if any(v.shared and v.perms & PROT_EXEC for v in space.vm.vmas):
            return False            # shared text: a new owner's sync would write others' pages
        kept = tuple(Vma(start, end, perms) for start, end, perms in areas)
        arch = space.arch
        machine = space.give_up_machine()
        machine.reset()
        machine.mem.unmap_all_but(space.layout.user_top, {(v.start, v.end) for v in kept})
        self._machines.append((arch, areas, RecycledMachine(machine, kept)))
        while len(self._machines) > self.size:
            _, _, evicted = self._machines.pop(0)
            evicted.machine.close()
        return True

    def take(self, arch: str, areas: tuple, like=None) -> RecycledMachine | None:
        """A kept Machine whose text areas are exactly `areas` (code_areas form), or None; the
        most recently kept, unless one holds text from the same sync as Memory `like` (a
        fork's parent: emu/memory.py same_source), which then needs no comparison."""
        matching = [index for index in range(len(self._machines) - 1, -1, -1)
                    if self._machines[index][:2] == (arch, areas)]
        if not matching:
            return None
        if like is not None:
            matching.sort(key=lambda i: not self._machines[i][2].machine.mem.same_source(like))
        _, _, recycled = self._machines.pop(matching[0])
        self.recycled += 1
        return recycled

    def close(self) -> None:
        """Close every kept Machine (the run is over)."""
        for _, _, recycled in self._machines:
            recycled.machine.close()
        self._machines = []
