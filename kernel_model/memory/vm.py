"""The page mapper: a process's virtual memory areas on top of the Machine's memory.

Linux semantics (mm/mmap.c, mm/mprotect.c): page granularity, MAP_FIXED replaces what was
there, munmap of a hole is fine, mprotect of an unmapped page is ENOMEM, brk grows and shrinks
the heap and never fails loudly (it returns the old break). Every area is named the way
/proc/self/maps names it.
"""
import bisect
from dataclasses import replace

from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE  # noqa: F401  (the one definition)
from emu.shared_pages import SharedPages

from .. import errno as E
from ..errno import GuestErrno
from .file_fault import pages_of_file
from .layout import PAGE, Layout
from .vma import Vma

MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 0x01, 0x02, 0x10, 0x20
MAP_TYPE, MAP_SHARED_VALIDATE = 0x0F, 0x03     # the latter: MAP_SHARED with checked flags
MAP_GROWSDOWN, MAP_NORESERVE, MAP_FIXED_NOREPLACE, MAP_LOCKED = 0x100, 0x4000, 0x100000, 0x2000
STACK_GUARD_GAP = 256 * PAGE            # mm/mmap.c stack_guard_gap (the stack_guard_gap= default)
PROT_MASK = PROT_READ | PROT_WRITE | PROT_EXEC
# include/linux/mm.h DEFAULT_MAX_MAP_COUNT: USHRT_MAX - MAPCOUNT_ELF_CORE_MARGIN (5), the
# default of sysctl vm.max_map_count, the most areas one mm may hold (mm/mmap.c)
DEFAULT_MAX_MAP_COUNT = 65530


def page_up(n: int) -> int:
    return (n + PAGE - 1) & ~(PAGE - 1)


_NO_VMA = Vma(0, 0, 0)        # holds no address


def _start(vma: Vma) -> int:
    return vma.start


class AreaMap:
    """The areas (Vma) of one address space, in address order, and the calls that change them
    (mmap, munmap, mprotect, brk) on the Machine's memory: Linux's mm_struct and its VMA list.
    The address space itself, with this map, its Machine, GDT and IDT, is space.Space."""

    def __init__(self, machine, layout: Layout, *, memory_limit: int = 4 << 30):
        self.machine = machine
        self.layout = layout
        self._vmas: list[Vma] = []
        self._starts: list[int] = []      # _vmas' starts: bisect without a key function
        self._mapped = 0                  # the bytes of _vmas (mapped_bytes, at every mmap)
        self.max_map_count = DEFAULT_MAX_MAP_COUNT
        self.brk_start = self.brk_end = 0
        self.memory_limit = memory_limit
        # Set by the kernel: may `extra` more bytes be mapped, counting every live process?
        self.budget_allows = None
        self.lock_future = False      # mlockall(MCL_FUTURE): new areas are locked (mm->def_flags)
        self._last_hit = (0, _NO_VMA)         # vma_at's last answer: (index, area)
        # [start, end) of the readable area `readable` found last, (0, 0) after any change to
        # the areas (_insert, _drop, the vmas setter): a call's buffer is nearly always in it,
        # and ctx.read (syscalls/context.py) tests it inline before asking `readable`.
        self.readable_window = (0, 0)

    @property
    def vmas(self) -> list[Vma]:
        """The areas in address order (read it; change it only by assigning a new list)."""
        return self._vmas

    @vmas.setter
    def vmas(self, areas: list[Vma]) -> None:
        self._vmas = sorted(areas, key=_start)
        self._starts = [v.start for v in self._vmas]
        self._mapped = sum(v.end - v.start for v in self._vmas)
        self._last_hit = (0, _NO_VMA)
        self.readable_window = (0, 0)

    # ---- queries ---------------------------------------------------------------------------
    def vma_at(self, addr: int) -> Vma | None:
        """The area holding `addr`. Every syscall that takes a buffer asks (EFAULT checks),
        mostly about the area it asked about last time, so the last answer is tried first.
        It is still right if that very Vma object is still in the list: areas are immutable
        and never overlap, so the one holding `addr` can only be that one."""
        vmas = self._vmas
        i, vma = self._last_hit
        if vma.start <= addr < vma.end and i < len(vmas) and vmas[i] is vma:
            return vma
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and vmas[i].end > addr:
            self._last_hit = (i, vmas[i])
            return vmas[i]
        return None

    def allows(self, addr: int, size: int, prot: int) -> bool:
        """Whether every byte of [addr, addr+size) lies in areas whose permissions include
        `prot`: the kernel's access_ok plus the VMA check a copy to or from the user makes
        (a syscall's buffer, a signal frame being built)."""
        end = addr + size
        while addr < end:
            vma = self.vma_at(addr)
            if vma is None or vma.perms & prot != prot:
                return False
            addr = vma.end
        return True

    def readable(self, addr: int, size: int) -> bool:
        """Whether a copy from the user may read [addr, addr+size): every byte in an area
        that is not PROT_NONE (on x86 a present page is readable whatever else it allows:
        Intel SDM Vol. 3A 4.6, so PROT_WRITE and PROT_EXEC imply PROT_READ)."""
        end = addr + size
        start, stop = self.readable_window
        if start <= addr and end <= stop:
            return True
        vma = self.vma_at(addr)
        if vma is not None and vma.perms and end <= vma.end:
            self.readable_window = (vma.start, vma.end)
            return True
        return self.readable_walk(addr, size)

    def readable_walk(self, addr: int, size: int) -> bool:
        """`readable` from the areas alone, area by area."""
        end = addr + size
        while addr < end:
            vma = self.vma_at(addr)
            if vma is None or not vma.perms:
                return False
            addr = vma.end
        return True

    def maps_text(self) -> bytes:
        return b"".join(v.maps_line() for v in self.vmas)

    def mapped_bytes(self) -> int:
        return self._mapped

    def locked_bytes(self) -> int:
        """mm->locked_vm in bytes: the areas with VM_LOCKED (/proc/PID/status VmLck)."""
        return sum(v.end - v.start for v in self.vmas if v.locked)

    def is_free(self, start: int, end: int) -> bool:
        """Whether no area holds a byte of [start, end)."""
        return not self._overlapping(start, end)

    def vmas_overlapping(self, start: int, end: int) -> list[Vma]:
        return self._overlapping(start, end)

    def _overlapping(self, start: int, end: int) -> list[Vma]:
        """The areas holding a byte of [start, end), in address order: those starting below
        `end`, from the last one starting at or below `start` (areas never overlap)."""
        lo = max(bisect.bisect_right(self._starts, start) - 1, 0)
        hi = bisect.bisect_left(self._starts, end)
        return [v for v in self._vmas[lo:hi] if v.end > start]

    # ---- primitive: establish an area ------------------------------------------------------
    def map_area(self, start: int, size: int, perms: int, *, name: bytes = b"",
                 data: bytes = b"", offset: int = 0, shared: bool = False,
                 locked: bool | None = None, file=None, backed: int | None = None) -> int:
        """Map [start, start+size) (page aligned), replacing whatever was there. It is locked
        when asked, or else when mlockall(MCL_FUTURE) said so. A private mapping of a regular
        `file` gets pages for its first `backed` bytes only, those that hold a byte of the file:
        a fault past them is SIGBUS or reads the page in (memory/file_fault.py)."""
        end = self._make_room(start, size)
        backed = end - start if backed is None else backed
        if (perms & PROT_MASK or data) and backed:
            self.machine.mem.map(start, backed, perms & PROT_MASK)
        # else a PROT_NONE area with no bytes yet gets no pages until mprotect makes it
        # accessible (back): it holds nothing a guest could see, and each Unicorn region costs
        # more the more regions there are (bench/area_map.py --machine; LTP munmap04 maps
        # 65 530 of them). A fault there is the area's: SEGV_ACCERR (user_faults.py).
        if data:
            self.machine.mem.write(start, data)
        locked = self.lock_future if locked is None else locked
        self._insert(Vma(start, end, perms & PROT_MASK, name, offset, shared, locked=locked,
                         file=file))
        return start

    def map_shared_area(self, start: int, size: int, perms: int, backing, *, name: bytes = b"",
                        offset: int = 0, may_write: bool = True, locked: bool | None = None,
                        file=None) -> int:
        """Map [start, start+size) onto shared pages, replacing whatever was there: `backing`
        is a list of (SharedPages, offset in it, length) that covers the range in order (one
        object for anonymous memory, the page cache's extents of a file: page_cache.py), or
        a first part of it: pages past the end of a file have none (memory/file_fault.py)."""
        end = self._make_room(start, size)
        addr = start
        for shared, shared_offset, length in backing:
            self.machine.mem.map_shared(addr, length, perms & PROT_MASK, shared, shared_offset)
            addr += length
        assert addr <= end, "shared backing must lie within the area"
        locked = self.lock_future if locked is None else locked
        self._insert(Vma(start, end, perms & PROT_MASK, name, offset, True, may_write, locked,
                         file=file))
        return start

    def _make_room(self, start: int, size: int) -> int:
        """Check the memory limits for a new area at start and unmap what lies there; its end."""
        end = start + page_up(size)
        if self.mapped_bytes() + (end - start) > self.memory_limit or \
                (self.budget_allows is not None and not self.budget_allows(end - start)):
            raise GuestErrno(E.ENOMEM, "guest memory limit")
        self._remove(start, end)
        return end

    def adopt_area(self, vma: Vma) -> None:
        """Record an area whose pages are already mapped in the Machine (a recycled Machine's
        kept code: kernel_model/memory/space_pool.py)."""
        self._insert(vma)

    def remove_range(self, start: int, end: int) -> None:
        """Unmap [start, end) without the checks of munmap (a kernel-side change)."""
        self._remove(start, end)

    def rename_area(self, vma: Vma, **changes) -> None:
        self._drop(vma)
        self._insert(replace(vma, **changes))

    def _insert(self, vma: Vma) -> None:
        i = bisect.bisect_left(self._starts, vma.start)
        self._starts.insert(i, vma.start)
        self._vmas.insert(i, vma)
        self._mapped += vma.end - vma.start
        self.readable_window = (0, 0)

    def _drop(self, vma: Vma) -> None:
        """Take `vma` out of the list: found by its start (list.remove would compare every
        area before it, field by field)."""
        i = bisect.bisect_left(self._starts, vma.start)
        assert self._vmas[i] is vma, "dropping an area that is not in the map"
        del self._starts[i], self._vmas[i]
        self._mapped -= vma.end - vma.start
        self.readable_window = (0, 0)

    def _check_split_room(self, start: int, end: int) -> None:
        """mm/mmap.c do_vmi_align_munmap: unmapping the inside of one area leaves two, and is
        refused with ENOMEM when that would take the count past vm.max_map_count ("let
        map_count go just above its limit temporarily" is for the other cases)."""
        vma = self.vma_at(start)
        if vma is not None and vma.start < start and end < vma.end and \
                len(self._vmas) >= self.max_map_count:
            raise GuestErrno(E.ENOMEM, "vm.max_map_count")

    def _remove(self, start: int, end: int) -> None:
        """Unmap [start, end), splitting areas that straddle the edges."""
        for vma in self._overlapping(start, end):
            self._drop(vma)
            if vma.start < start:
                self._insert(replace(vma, end=start))
            if vma.end > end:
                self._insert(replace(vma, start=end, offset=vma.offset + (end - vma.start)))
        self.machine.mem.unmap(start, end - start)

    # ---- mmap family -----------------------------------------------------------------------
    def find_free(self, size: int, below: int | None = None) -> int:
        """Top-down search for a hole of `size` bytes below `below` (Linux's default layout)."""
        top = below if below is not None else self.layout.mmap_base
        # from the last area starting below top, downwards (those above cannot be in the way)
        for i in range(bisect.bisect_left(self._starts, top) - 1, -1, -1):
            vma = self._vmas[i]
            if vma.end <= top - size:
                return top - size
            top = min(top, vma.start)
        if top - size >= 0x10000:           # stay above mmap_min_addr
            return top - size
        raise GuestErrno(E.ENOMEM, "no free address range")

    def mmap(self, addr: int, length: int, prot: int, flags: int, *, data: bytes = b"",
             name: bytes = b"", offset: int = 0, backing=None, may_write: bool = True,
             file=None) -> int:
        """mmap(2) at a place chosen as Linux does. MAP_SHARED areas map `backing(size)`'s
        shared pages (map_shared_area's list), or, anonymous, pages of their own that a fork
        will share (mm/shmem.c shmem_zero_setup)."""
        if length <= 0 or addr % PAGE:
            raise GuestErrno(E.EINVAL)
        size = page_up(length)
        if size > self.layout.user_top:
            raise GuestErrno(E.ENOMEM)
        if len(self._vmas) > self.max_map_count:     # do_mmap: "Too many mappings?"
            raise GuestErrno(E.ENOMEM, "vm.max_map_count")
        if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE):
            if addr + size > self.layout.user_top or addr < 0x1000:
                raise GuestErrno(E.EPERM if addr < 0x1000 else E.ENOMEM)
            if flags & MAP_FIXED_NOREPLACE and self._overlapping(addr, addr + size):
                raise GuestErrno(E.EEXIST)
            self._check_split_room(addr, addr + size)
            start = addr
        elif addr and addr + size <= self.layout.user_top and not self._overlapping(addr, addr + size):
            start = addr                     # the hint is free: honour it, as Linux does
        else:
            start = self.find_free(size)
        locked = True if flags & MAP_LOCKED else None
        if flags & MAP_TYPE in (MAP_SHARED, MAP_SHARED_VALIDATE):
            pieces = backing(size) if backing is not None else [(SharedPages(size), 0, size)]
            return self.map_shared_area(start, size, prot, pieces, name=name, offset=offset,
                                        may_write=may_write, locked=locked, file=file)
        backed = size if file is None else pages_of_file(file, offset, size)
        self.map_area(start, size, prot, name=name, data=data[:backed], offset=offset,
                      locked=locked, file=file, backed=backed)
        if flags & MAP_GROWSDOWN:
            self.rename_area(self.vma_at(start), grows_down=True)
        return start

    def grow_down(self, addr: int, stack_limit: int) -> bool:
        """mm/mmap.c expand_stack for a fault at unmapped `addr`: the area just above, if it
        grows down, is extended to addr's page, unless that comes within stack_guard_gap of
        the area below (Linux's 256 pages) or makes it larger than RLIMIT_STACK. Whether it
        grew (the faulting instruction then runs again)."""
        page = addr & ~(PAGE - 1)
        if self.vma_at(addr) is not None:
            return False        # inside an area (one without pages yet): no stack to grow
        i = bisect.bisect_right(self._starts, addr)     # the first area starting above addr
        above = self._vmas[i] if i < len(self._vmas) else None
        if above is None or not above.grows_down or page < 0x10000:
            return False
        below = self._vmas[i - 1] if i > 0 and self._vmas[i - 1].end <= addr else None
        if below is not None and not below.grows_down and below.perms and \
                page - below.end < STACK_GUARD_GAP:
            return False
        if above.end - page > stack_limit:
            return False
        self.machine.mem.map(page, above.start - page, above.perms)
        self._drop(above)
        self._insert(replace(above, start=page, offset=above.offset - (above.start - page)))
        return True

    def munmap(self, addr: int, length: int) -> None:
        if addr % PAGE or length <= 0 or addr + length > self.layout.user_top:
            raise GuestErrno(E.EINVAL)
        self._check_split_room(addr, addr + page_up(length))
        self._remove(addr, addr + page_up(length))

    def mprotect(self, addr: int, length: int, prot: int) -> None:
        """mm/mprotect.c do_mprotect_pkey: EINVAL for an unaligned start, ENOMEM for a hole,
        EACCES for PROT_WRITE on an area that may not be written (VM_MAYWRITE clear)."""
        if addr % PAGE:
            raise GuestErrno(E.EINVAL)
        end = addr + page_up(length)
        areas = self.areas_covering(addr, end)
        if prot & PROT_WRITE and not all(vma.may_write for vma in areas):
            raise GuestErrno(E.EACCES)
        self.set_flags(addr, end, perms=prot & PROT_MASK)
        self.machine.mem.protect(addr, end - addr, prot & PROT_MASK)
        if prot & PROT_MASK:
            self.back(addr, end)

    def back(self, start: int, end: int) -> None:
        """Give zero pages, with their areas' permissions, to the parts of [start, end) that
        were left without (map_area's never-touched PROT_NONE areas); areas cover the range."""
        mem = self.machine.mem
        for lo, hi in mem.unbacked(start, end - start):
            for vma in self._overlapping(lo, hi):
                if vma.shared:
                    continue          # past the end of its file: a fault there is SIGBUS
                a, b = max(vma.start, lo), min(vma.end, hi)
                mem.map(a, b - a, vma.perms)

    def backed_parts(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts (lo, hi) of [start, end) that have pages (see map_area), in order."""
        parts, at = [], start
        for lo, hi in self.machine.mem.unbacked(start, end - start):
            if lo > at:
                parts.append((at, lo))
            at = hi
        if at < end:
            parts.append((at, end))
        return parts

    def areas_covering(self, start: int, end: int) -> list[Vma]:
        """The areas of [start, end) in address order; ENOMEM when a page of it is unmapped
        (mprotect, mlock, msync, madvise all answer a hole so)."""
        areas, covered = [], start
        for vma in self._overlapping(start, end):
            if vma.start > covered:
                raise GuestErrno(E.ENOMEM)
            areas.append(vma)
            covered = vma.end
        if covered < end:
            raise GuestErrno(E.ENOMEM)
        return areas

    def set_flags(self, start: int, end: int, **changes) -> None:
        """Give the pages [start, end) the Vma fields `changes`, splitting the areas that
        straddle its edges (Linux's mprotect_fixup and mlock_fixup split_vma). The Machine's
        page permissions are the caller's to change. Each split needs room under
        vm.max_map_count (mm/mmap.c split_vma: ENOMEM at the limit); none is made if one lacks it."""
        areas = self._overlapping(start, end)
        splits = (areas[0].start < start) + (areas[-1].end > end) if areas else 0
        if splits and len(self._vmas) + splits > self.max_map_count:
            raise GuestErrno(E.ENOMEM, "vm.max_map_count")
        for vma in areas:
            self._drop(vma)
            lo, hi = max(vma.start, start), min(vma.end, end)
            if vma.start < lo:
                self._insert(replace(vma, end=lo))
            self._insert(replace(vma, start=lo, end=hi, offset=vma.offset + (lo - vma.start),
                                 **changes))
            if vma.end > hi:
                self._insert(replace(vma, start=hi, offset=vma.offset + (hi - vma.start)))

    # ---- brk -------------------------------------------------------------------------------
    def set_brk_start(self, addr: int) -> None:
        self.brk_start = self.brk_end = page_up(addr)

    def brk(self, new: int, *, prot: int = PROT_READ | PROT_WRITE) -> int:
        """Linux sys_brk: move the break if possible; always return the (possibly old) break.
        New heap pages get `prot` (VM_DATA_DEFAULT_FLAGS: executable too under
        READ_IMPLIES_EXEC, kernel_model/personality.py)."""
        if new < self.brk_start:
            return self.brk_end
        old_top, new_top = page_up(self.brk_end), page_up(new)
        try:
            if new_top > old_top:
                if self._overlapping(old_top, new_top + PAGE):    # keep a guard gap, as Linux does
                    return self.brk_end
                self.map_area(old_top, new_top - old_top, prot, name=b"[heap]")
                self._merge_heap(new_top)
            elif new_top < old_top:
                self._remove(new_top, old_top)
        except GuestErrno:
            return self.brk_end
        self.brk_end = new
        return new

    def _merge_heap(self, top: int) -> None:
        """Join touching [heap] areas that have the same permissions. Like Linux's brk, which
        extends the last area only when its flags match: a part that mprotect changed stays an
        area of its own (and keeps those permissions in the Machine too)."""
        heap = [v for v in self._overlapping(self.brk_start, top) if v.name == b"[heap]"]
        runs: list[list[Vma]] = []
        for vma in heap:
            last = runs[-1][-1] if runs else None
            if last is not None and last.end == vma.start and \
                    (last.perms, last.locked) == (vma.perms, vma.locked):
                runs[-1].append(vma)
            else:
                runs.append([vma])
        for run in runs:
            if len(run) > 1:
                for vma in run:
                    self._drop(vma)
                self._insert(replace(run[0], end=run[-1].end))
