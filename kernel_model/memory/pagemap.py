"""/proc/PID/pagemap's entries (fs/proc/task_mmu.c pagemap_read, Documentation/admin-guide/
mm/pagemap.rst): one 64-bit word a virtual page. Bit 63 is set for a page present in memory
(its host page exists: emu/memory.py Memory.resident), with its frame number in bits 0-54 —
the guest's physical address is its virtual one (Unicorn's physical = virtual, emu/tlb.py), so
the frame is the page number, which root may read; bit 61 marks a page of a file or of shared
memory, bit 56 one mapped by this process only (a present private page: no map counts are
kept). A page outside every area, or not present, is 0 (nothing is ever swapped).
"""
import struct

from .layout import PAGE

PM_PRESENT, PM_FILE, PM_MMAP_EXCLUSIVE = 1 << 63, 1 << 61, 1 << 56
PM_PFRAME_MASK = (1 << 55) - 1


def pagemap_entries(vm, first_page: int, count: int) -> bytes:
    """The words of pages [first_page, first_page+count)."""
    words = [0] * count
    lo, hi = first_page * PAGE, (first_page + count) * PAGE
    for vma in vm.vmas_overlapping(lo, hi):
        start, end = max(vma.start, lo), min(vma.end, hi)
        flags = PM_FILE if vma.shared or vma.file is not None or \
            vma.name and vma.name not in (b"[heap]", b"[stack]") else PM_MMAP_EXCLUSIVE
        for i, present in enumerate(vm.machine.mem.resident(start, end - start)):
            page = start // PAGE + i
            if present:
                words[page - first_page] = PM_PRESENT | flags | (page & PM_PFRAME_MASK)
    return struct.pack(f"<{count}Q", *words)
