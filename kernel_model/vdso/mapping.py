"""exec maps the vvar pages and the vDSO into the new address space, and says where.

Linux does it last in load_elf_binary (ARCH_SETUP_ADDITIONAL_PAGES: arch/x86/entry/vdso/vma.c
map_vdso), after the program and its interpreter, where mmap would put the pages: with address
randomization off (the sandbox has none), the top of the mmap area below what is already there.
The vvar pages come first (read-only: the vDSO reads them, the kernel writes them), then the
image (read and execute). The auxiliary vector then carries AT_SYSINFO_EHDR, the image's
address, and for an i386 process AT_SYSINFO, its __kernel_vsyscall (ARCH_DLINFO_IA32).
A fork's child has the same pages at the same addresses (they are areas of the copied space).
"""
from __future__ import annotations

from typing import NamedTuple

from kernel_model.memory.layout import PAGE
from kernel_model.memory.vm import PROT_EXEC, PROT_READ
from kernel_model.vdso.elf_image import IMAGE_PAGES, vdso_image
from kernel_model.vdso.vvar import VCLOCK_PAGES, VVAR_DISTANCE, VVAR_PAGES, vvar_page


class Vdso(NamedTuple):
    base: int                    # the image's first byte (AT_SYSINFO_EHDR)
    symbols: dict[str, int]      # name -> offset in the image

    def address(self, name: str) -> int:
        return self.base + self.symbols[name]

    @property
    def sysinfo(self) -> int | None:
        """AT_SYSINFO: i386's system call entry; none on x86-64."""
        offset = self.symbols.get("__kernel_vsyscall")
        return None if offset is None else self.base + offset


def map_vdso(space, clock) -> Vdso:
    """Map [vvar], [vvar_vclock] and [vdso] top-down in the mmap area of `space`."""
    image = vdso_image(space.arch)
    start = space.vm.find_free(VVAR_DISTANCE + IMAGE_PAGES * PAGE)
    vclock = start + VVAR_PAGES * PAGE
    space.vm.map_area(start, VVAR_PAGES * PAGE, PROT_READ, name=b"[vvar]", data=vvar_page(clock))
    space.vm.map_area(vclock, VCLOCK_PAGES * PAGE, PROT_READ, name=b"[vvar_vclock]")
    base = start + VVAR_DISTANCE
    space.vm.map_area(base, IMAGE_PAGES * PAGE, PROT_READ | PROT_EXEC, name=b"[vdso]",
                      data=image.data)
    space.vdso = Vdso(base, image.symbols)
    return space.vdso
