"""A virtual memory area (include/linux/mm_types.h struct vm_area_struct): what vm.py's page
mapper keeps, one per run of pages with the same protection, backing and flags."""
from dataclasses import dataclass, field

from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE


@dataclass(frozen=True)
class Vma:
    """One virtual memory area [start, end): its protection, backing and name (vm_area_struct)."""
    start: int
    end: int
    perms: int
    name: bytes = b""          # b"[heap]", b"[stack]", a file path, or b"" for anonymous
    offset: int = 0            # file offset of `start` for file mappings
    shared: bool = False
    # VM_MAYWRITE: mprotect may add PROT_WRITE (not to a shared map of a file opened read-only:
    # do_mmap clears it, and mprotect then answers EACCES)
    may_write: bool = True
    locked: bool = False       # VM_LOCKED: mlock, mlockall, MAP_LOCKED (VmLck counts these)
    wipe_on_fork: bool = False  # VM_WIPEONFORK (MADV_WIPEONFORK): a child gets zero pages here
    dont_fork: bool = False     # VM_DONTCOPY (MADV_DONTFORK): a child does not get the area
    # vm_file of a shared file mapping, or of a private mapping of a regular file
    file: object = field(default=None, compare=False)
    grows_down: bool = False    # VM_GROWSDOWN (MAP_GROWSDOWN): a fault below it extends it
    sealed: bool = False        # VM_SEALED (mseal): no unmap, move, protection change (seal.py)

    def maps_line(self) -> bytes:
        rwx = "".join(c if self.perms & bit else "-" for c, bit in
                      (("r", PROT_READ), ("w", PROT_WRITE), ("x", PROT_EXEC)))
        kind = "s" if self.shared else "p"
        # fs/proc/task_mmu.c: "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " (note the trailing
        # space, kept on anonymous lines), then a name padded to column 73 on 64-bit kernels.
        head = f"{self.start:08x}-{self.end:08x} {rwx}{kind} {self.offset:08x} 00:00 0 "
        if self.name:
            head = head.ljust(73)
        return head.encode() + self.name + b"\n"
