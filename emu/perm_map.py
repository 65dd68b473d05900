"""The permission map of one address space: which guest ranges are mapped, with which perms.

Apart from emu/memory.py because it is a concept of its own: a mirror of the regions Unicorn
holds (uc_mem_regions), kept so that the questions asked on every TLB fill (perms_at, from
emu/tlb.py) and on every write into code (touches_exec) never call into Unicorn, while
Memory itself deals with the host pages behind those ranges. It holds no pages and no views.
"""
import bisect

# The page protection bits, defined once for the project (issue 15): Unicorn's UC_PROT_* and
# Linux's PROT_* are the same bits; emu/memory.py, kernel_model/memory/vm.py and
# kernel_model/flags.py re-export them upward.
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4


class PermMap:
    def __init__(self):
        # Sorted, non-overlapping (start, end) ranges that are executable: the write path
        # checks them to know when translations must be dropped.
        self._exec_starts: list[int] = []
        self._stale = False               # the range tables need a rebuild (_refresh_ranges)
        self._perm_map: list[tuple[int, int, int]] = []    # (start, end, perms): paint()
        self._exec_ends: list[int] = []
        # Every mapped range with its perms, as Unicorn holds them (regions()), sorted: the
        # page walker (tlb.py) asks perms_at() on every TLB miss.
        self._region_starts: list[int] = []
        self._region_ends: list[int] = []
        self._region_perms: list[int] = []

    def entries(self) -> list[tuple[int, int, int]]:
        """The (start, end, perms) ranges as painted, sorted, not merged."""
        return self._perm_map

    def paint(self, lo: int, hi: int, perms: int | None) -> None:
        """Record [lo, hi) as mapped with `perms` (None: unmapped) in the permission map, the
        mirror of Unicorn's regions that perms_at(), regions() and the write path read: asking
        Unicorn (uc_mem_regions) costs a call listing every region, and the TLB walker asks on
        every fill."""
        kept = []
        for start, end, old in self._perm_map:
            if end <= lo or start >= hi:
                kept.append((start, end, old))
                continue
            if start < lo:
                kept.append((start, lo, old))
            if end > hi:
                kept.append((hi, end, old))
        if perms is not None:
            kept.append((lo, hi, perms))
        kept.sort()
        self._perm_map = kept
        self._stale = True

    def regions(self) -> list[tuple[int, int, int]]:
        """Mapped ranges as (start, end_exclusive, perms), sorted, adjacent equal ones merged."""
        out: list[list[int]] = []
        for begin, end, perms in self._perm_map:
            if out and out[-1][1] == begin and out[-1][2] == perms:
                out[-1][1] = end
            else:
                out.append([begin, end, perms])
        return [tuple(r) for r in out]

    def perms_at(self, addr: int) -> int | None:
        if self._stale:
            self._refresh_ranges()
        i = bisect.bisect_right(self._region_starts, addr) - 1
        return self._region_perms[i] if i >= 0 and addr < self._region_ends[i] else None

    def _refresh_ranges(self) -> None:
        """The tables that perms_at() and the write path read, rebuilt on first use after a
        map/unmap/protect (`_stale`): a fork or an exec maps and unmaps a dozen areas in a
        row, and each rebuild asks Unicorn for every region."""
        self._stale = False
        regions = self.regions()
        self._region_starts = [s for s, _, _ in regions]
        self._region_ends = [e for _, e, _ in regions]
        self._region_perms = [p for _, _, p in regions]
        ranges = [(s, e) for s, e, p in regions if p & PROT_EXEC]
        self._exec_starts = [s for s, _ in ranges]
        self._exec_ends = [e for _, e in ranges]

    def touches_exec(self, lo: int, hi: int) -> bool:
        if self._stale:
            # One look at the permission map instead of rebuilding the tables, which wait for
            # perms_at: a fork or an exec alternates maps with writes or copies, and a released
            # space unmaps a dozen pieces in a row, each asking this.
            return any(perms & PROT_EXEC for low, high, perms in self._perm_map
                       if low < hi and high > lo)
        i = bisect.bisect_right(self._exec_starts, hi - 1) - 1
        return i >= 0 and self._exec_ends[i] > lo
