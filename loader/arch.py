"""The two ELF flavours trapline runs, and the per-architecture limits the loader enforces."""
from __future__ import annotations

from typing import NamedTuple

ELFCLASS32, ELFCLASS64 = 1, 2
EM_386, EM_X86_64 = 3, 62
PAGE_SIZE = 4096


class ElfArch(NamedTuple):
    name: str
    bits: int
    elf_class: int
    machine: int
    phent: int        # sizeof(ElfN_Phdr): Linux refuses any other e_phentsize
    ehsize: int       # sizeof(ElfN_Ehdr): a shorter file is truncated
    user_top: int     # first address that belongs to the kernel
    pie_base: int     # where Linux puts an ET_DYN without ASLR

    @property
    def word_size(self) -> int:
        return self.bits // 8


# i386: a compat task of an x86-64 kernel (TASK_SIZE 0xFFFFE000), whose top 4 MiB the sandbox's
# kernel region takes (kernel_model/memory/layout.py): ld.so is mapped near 0xF7FFE000.
# x86-64: TASK_SIZE_MAX with 4-level paging is 0x7ffffffff000; the canonical lower half ends at 2**47.
I386 = ElfArch("i386", 32, ELFCLASS32, EM_386, 32, 52, 0xFFC0_0000, 0x5655_5000)
X86_64 = ElfArch("x86_64", 64, ELFCLASS64, EM_X86_64, 56, 64, 0x8000_0000_0000, 0x5555_5555_4000)

BY_MACHINE = {EM_386: I386, EM_X86_64: X86_64}
BY_NAME = {I386.name: I386, X86_64.name: X86_64}
