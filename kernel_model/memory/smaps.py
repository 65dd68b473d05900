"""/proc/PID/smaps: each area's maps line, then its memory counts (fs/proc/task_mmu.c
show_smap, __show_smap and show_smap_vma_flags, as Linux 6.1 prints them).

Resident pages are those whose host pages exist (emu/memory.py Memory.resident: touched, or
faulted in by mlock); the model keeps no reverse map, so a page counts whole for every area
mapping it (Pss is Rss) and a page only read counts too (Linux leaves the zero page out).
Nothing is ever swapped, clean or huge, and with no map counts a page is counted as one
mapped once (smaps_account: Private_Dirty; Anonymous too in a private anonymous area). Locked counts the resident pages of a VM_LOCKED area
(LTP mlock05 compares it and Rss with the size it locked).
"""
from .layout import PAGE
from .vm import PROT_EXEC, PROT_READ, PROT_WRITE, Vma

# (label, what) in __show_smap's order; the label is printed in 16 columns, the value in 8
_FIELDS = ("Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss", "Pss_Dirty", "Shared_Clean",
           "Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "Anonymous",
           "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb",
           "Private_Hugetlb", "Swap", "SwapPss", "Locked")


def smaps_text(vm) -> bytes:
    mem = vm.machine.mem
    return b"".join(_area(vma, _resident_bytes(mem, vma)) for vma in vm.vmas)


def _resident_bytes(mem, vma: Vma) -> int:
    return sum(mem.resident(vma.start, vma.end - vma.start)) * PAGE


def _area(vma: Vma, rss: int) -> bytes:
    anonymous = not vma.shared and vma.file is None and \
        (not vma.name or vma.name in (b"[heap]", b"[stack]"))
    values = {"Size": vma.end - vma.start, "KernelPageSize": PAGE, "MMUPageSize": PAGE,
              "Rss": rss, "Pss": rss, "Pss_Dirty": rss, "Referenced": rss,
              "Private_Dirty": rss,
              "Anonymous": rss if anonymous else 0,
              "Locked": rss if vma.locked else 0}
    lines = [b"%-16s%8d kB\n" % (label.encode() + b":", values.get(label, 0) // 1024)
             for label in _FIELDS]
    return vma.maps_line() + b"".join(lines) + b"%-16s%8d\n" % (b"THPeligible:", 0) + \
        b"VmFlags: " + b"".join(flag + b" " for flag in _flags(vma)) + b"\n"


def _flags(vma: Vma) -> list[bytes]:
    """show_smap_vma_flags' two-letter names of the vm_flags the model has, in its order."""
    bits = [(vma.perms & PROT_READ, b"rd"), (vma.perms & PROT_WRITE, b"wr"),
            (vma.perms & PROT_EXEC, b"ex"), (vma.shared and vma.perms & PROT_WRITE, b"sh"),
            (True, b"mr"), (vma.may_write, b"mw"), (True, b"me"), (vma.shared, b"ms"),
            (vma.grows_down, b"gd"), (vma.locked, b"lo"), (vma.dont_fork, b"dc"),
            (not vma.shared and vma.perms & PROT_WRITE, b"ac"), (vma.wipe_on_fork, b"wf")]
    return [name for present, name in bits if present]
