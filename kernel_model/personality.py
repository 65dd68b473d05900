"""The process personality, and what READ_IMPLIES_EXEC changes (Linux include/uapi/linux/
personality.h, kernel/exec_domain.c, arch/x86/include/asm/elf.h).

A task's personality is inherited by fork and kept across exec, except that a 64-bit exec
clears READ_IMPLIES_EXEC (arch/x86/kernel/process_64.c set_personality_64bit: "64bit processes
have always behaved this way"); an i386 exec keeps it (SET_PERSONALITY keeps the flags). Then
load_elf_binary adds READ_IMPLIES_EXEC for a program that asks for it (an i386 program without
PT_GNU_STACK: elf_read_implies_exec). With it, every mapping made with PROT_READ is executable
too: mmap and mprotect (mm/mmap.c do_mmap, mm/mprotect.c), the heap (VM_DATA_DEFAULT_FLAGS
in do_brk_flags), the program's own segments, and the stack of a program that does not say
(setup_arg_pages: VM_STACK_FLAGS; PT_GNU_STACK's PF_X or its absence decides otherwise).
"""
from loader.program_headers import EXSTACK_DEFAULT, EXSTACK_ENABLE_X

from .memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE

READ_IMPLIES_EXEC = 0x0400000
PER_QUERY = 0xFFFFFFFF          # personality(0xffffffff) reads without changing


def implied_prot(personality: int, prot: int) -> int:
    """The protection a mapping gets: PROT_READ brings PROT_EXEC under READ_IMPLIES_EXEC."""
    if prot & PROT_READ and personality & READ_IMPLIES_EXEC:
        return prot | PROT_EXEC
    return prot


def heap_prot(personality: int) -> int:
    """New heap pages: VM_DATA_DEFAULT_FLAGS (read, write, and exec under READ_IMPLIES_EXEC)."""
    return implied_prot(personality, PROT_READ | PROT_WRITE)


def exec_personality(old: int, image) -> int:
    """The personality a process runs the new `image` with (SET_PERSONALITY2, then
    elf_read_implies_exec)."""
    personality = old & ~READ_IMPLIES_EXEC if image.bits == 64 else old
    if image.read_implies_exec:
        personality |= READ_IMPLIES_EXEC
    return personality


def stack_executable(personality: int, image) -> bool:
    """setup_arg_pages: PT_GNU_STACK with PF_X makes the stack executable, without PF_X not;
    without PT_GNU_STACK the default data flags decide (executable under READ_IMPLIES_EXEC)."""
    if image.executable_stack == EXSTACK_DEFAULT:
        return bool(personality & READ_IMPLIES_EXEC)
    return image.executable_stack == EXSTACK_ENABLE_X


def apply_exec_personality(proc, program) -> None:
    """At exec's point of no return: the personality for the new image, and the protections
    the image's mappings get from it (the loader has already made the segments of a program
    that asks for READ_IMPLIES_EXEC executable; one that inherits it gets the same here)."""
    proc.personality = exec_personality(proc.personality, program.image)
    vm = program.space.vm
    for vma in list(vm.vmas):
        if vma.name == b"[stack]":
            wanted = (vma.perms | PROT_EXEC if stack_executable(proc.personality, program.image)
                      else vma.perms & ~PROT_EXEC)
        else:
            wanted = implied_prot(proc.personality, vma.perms)
        if wanted != vma.perms:
            vm.mprotect(vma.start, vma.end - vma.start, wanted)
