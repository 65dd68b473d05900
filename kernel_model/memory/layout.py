"""Where things live in a guest address space, per architecture.

User space ends where Linux's does (x86-64: 0x7ffffffff000; i386, a compat task: below the
kernel region, see I386_LAYOUT). The kernel region (GDT, IDT, entry stubs, kernel stacks) sits above it, like
Linux's kernel half. Unicorn has no paging, so the pages are mapped read-only to the guest: a
guest store into the IDT faults, and host writes (the kernel's) still land.

x86-64: Unicorn runs without paging and truncates addresses to 52 physical bits, so Linux's
canonical kernel half (0xffff8...) cannot hold code. The kernel region sits at 0xfffffff000000,
a non-canonical address no user pointer can form.
"""
from dataclasses import dataclass

PAGE = 0x1000


@dataclass(frozen=True)
class Layout:
    """Where user space, the initial stack, mmap and the kernel region are in one arch."""
    user_top: int          # first address above user space (TASK_SIZE)
    stack_top: int         # top of the initial stack (Linux STACK_TOP without randomisation)
    stack_size: int        # size of the initial stack mapping (grows on demand up to rlimit)
    mmap_base: int         # top-down mmap allocations start below this
    kernel_base: int       # kernel region: GDT, IDT, stubs
    gdt: int
    idt: int
    stubs: int             # ring-0 code: the iret stub that enters user mode, handler gate targets
    kstacks: int           # kernel stacks, one page each (thread slot order)
    kstack_pages: int
    ldt: int               # the LDT modify_ldt writes (cpu/ldt.py), 16 pages mapped on first use


# i386 programs run as a compat task of an x86-64 kernel, as on the reference host: its
# mmap_base is arch/x86/mm/mmap.c mmap_base() of task_size_32bit() 0xFFFFE000
# (IA32_PAGE_OFFSET) less the stack gap, the stack rlimit and its guard gap raised to at
# least SIZE_128M, without randomization: 0xF7FFE000 (setarch -R, /proc/self/maps). User space ends where the kernel region starts, 4 MiB below
# TASK_SIZE; the initial stack stays at the 3G/1G split's top.
I386_LAYOUT = Layout(
    user_top=0xFFC0_0000, stack_top=0xBFFF_F000, stack_size=8 << 20, mmap_base=0xF7FF_E000,
    kernel_base=0xFFC0_0000, gdt=0xFFC0_0000, idt=0xFFC0_1000, stubs=0xFFC0_2000,
    kstacks=0xFFC1_0000, kstack_pages=64, ldt=0xFFC6_0000)

X86_64_LAYOUT = Layout(
    user_top=0x7FFF_FFFF_F000, stack_top=0x7FFF_FFFF_F000, stack_size=8 << 20,
    mmap_base=0x7FFF_F7FF_F000,
    kernel_base=0xF_FFFF_FF00_0000, gdt=0xF_FFFF_FF00_0000, idt=0xF_FFFF_FF00_1000,
    stubs=0xF_FFFF_FF00_2000, kstacks=0xF_FFFF_FF01_0000, kstack_pages=64,
    ldt=0xF_FFFF_FF06_0000)

LAYOUTS = {"i386": I386_LAYOUT, "x86_64": X86_64_LAYOUT}
