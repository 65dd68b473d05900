"""Validation of the program header table, and the layout decisions Linux's load_elf_binary makes.

Works on plain `ProgramHeader` tuples (read by loader.elf_structs) so every rule is testable
without a file. Each rule rejects what Linux would refuse or what the kernel model relies on.
"""
from __future__ import annotations

from typing import NamedTuple

from loader.arch import PAGE_SIZE, ElfArch
from loader.errors import LoaderError
from loader.image import PERM_R, PERM_W, PERM_X, Segment

PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_PHDR = 1, 2, 3, 6
PT_GNU_STACK = 0x6474E551
PF_X, PF_W, PF_R = 1, 2, 4

# Linux refuses to map below vm.mmap_min_addr (65536 by default): the null page must stay unmapped.
MMAP_MIN_ADDR = 0x10000


class ProgramHeader(NamedTuple):
    index: int
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int


def page_start(addr: int) -> int:
    return addr & ~(PAGE_SIZE - 1)


def elf_perms(flags: int) -> int:
    """PF_* bits to our PERM_* bits (PF_X is bit 0 and PF_R bit 2; ours are the other way round)."""
    return ((PERM_R if flags & PF_R else 0) | (PERM_W if flags & PF_W else 0)
            | (PERM_X if flags & PF_X else 0))


PATH_MAX = 4096


def dynamic_address(phdrs: list[ProgramHeader], bias: int) -> int:
    """PT_DYNAMIC's address where the image is mapped, 0 when there is none."""
    return next((ph.vaddr + bias for ph in phdrs if ph.type == PT_DYNAMIC), 0)


def interpreter_path(phdrs: list[ProgramHeader], data: bytes) -> bytes | None:
    """The program interpreter PT_INTERP names (ld.so), or None for a static program. Checked
    as load_elf_binary checks it: 2..PATH_MAX bytes, inside the file, NUL-terminated."""
    for ph in phdrs:
        if ph.type != PT_INTERP:
            continue
        if not 2 <= ph.filesz <= PATH_MAX:
            raise LoaderError(f"PT_INTERP #{ph.index}: size {ph.filesz} is not a path (2..{PATH_MAX} bytes)")
        raw = data[ph.offset:ph.offset + ph.filesz]
        if len(raw) < ph.filesz:
            raise LoaderError(f"PT_INTERP #{ph.index} [{ph.offset:#x}, {ph.offset + ph.filesz:#x}) "
                              f"extends beyond the end of the file ({len(data):#x} bytes)")
        if not raw.endswith(b"\0"):
            raise LoaderError(f"PT_INTERP #{ph.index}: the interpreter path {_printable(raw)} "
                              "is not NUL-terminated")
        return raw[:-1].split(b"\0", 1)[0]      # Linux opens the string up to its first NUL
    return None


def _printable(raw: bytes) -> str:
    """A path for a one-line reason, whatever bytes the file holds."""
    name = raw.decode("utf-8", "replace")
    return name if name.isprintable() else ascii(name)


def check_load_header(ph: ProgramHeader, file_size: int) -> None:
    """Per-segment sanity: bss not negative, mmap-able offsets. (File bytes past the end of the
    file are not refused: see make_segments.) A large p_memsz is not refused here: Linux maps a
    bss of any size lazily (a 2 GiB .bss is a normal Fortran/HPC layout); check_address_space
    refuses what user space cannot hold, the kernel model what its memory limit cannot."""
    where = f"PT_LOAD #{ph.index}"
    if ph.filesz > ph.memsz:
        raise LoaderError(f"{where}: p_filesz {ph.filesz:#x} > p_memsz {ph.memsz:#x}")
    # gABI: "loadable process segments must have congruent values for p_vaddr and p_offset,
    # modulo the page size" -- otherwise mmap cannot map the file page at that address.
    if ph.filesz and ph.offset % PAGE_SIZE != ph.vaddr % PAGE_SIZE:
        raise LoaderError(f"{where}: p_offset {ph.offset:#x} and p_vaddr {ph.vaddr:#x} "
                          "are not congruent modulo the page size")


def load_headers(phdrs: list[ProgramHeader], file_size: int) -> list[ProgramHeader]:
    """The PT_LOADs that map something, validated and sorted by address."""
    loads = [ph for ph in phdrs if ph.type == PT_LOAD]
    for ph in loads:
        check_load_header(ph, file_size)
    loads = sorted((ph for ph in loads if ph.memsz > 0), key=lambda ph: (ph.vaddr, ph.index))
    if not loads:
        raise LoaderError("no PT_LOAD segment: nothing to map")
    return loads


def compute_load_bias(loads: list[ProgramHeader], is_pie: bool, arch: ElfArch, pie_base: int | None) -> int:
    """ET_EXEC loads where it says; a static-pie is moved so its first page lands at pie_base."""
    if not is_pie:
        return 0
    base = arch.pie_base if pie_base is None else pie_base
    if base % PAGE_SIZE or not 0 <= base < arch.user_top:
        raise LoaderError(f"pie_base {base:#x} is not a page-aligned {arch.name} user address")
    return base - page_start(loads[0].vaddr)


def check_address_space(loads: list[ProgramHeader], bias: int, arch: ElfArch) -> None:
    """Every byte must land in user space, and PT_LOADs may share a page but never a byte."""
    highest_end = 0
    previous = None
    for ph in loads:
        start, end = ph.vaddr + bias, ph.vaddr + bias + ph.memsz
        if start < MMAP_MIN_ADDR:
            raise LoaderError(f"PT_LOAD #{ph.index} at {start:#x} lies below mmap_min_addr ({MMAP_MIN_ADDR:#x})")
        if end > arch.user_top:
            raise LoaderError(f"PT_LOAD #{ph.index} [{start:#x}, {end:#x}) reaches kernel space "
                              f"(user space ends at {arch.user_top:#x} on {arch.name})")
        if previous is not None and start < highest_end:
            raise LoaderError(f"PT_LOAD #{ph.index} at {start:#x} overlaps PT_LOAD #{previous.index} "
                              f"(which ends at {highest_end:#x})")
        if end > highest_end:
            highest_end, previous = end, ph


def check_entry(entry: int, loads: list[ProgramHeader], bias: int, implies_exec: bool = False) -> None:
    """Linux would happily jump anywhere; we refuse an entry that cannot be executed."""
    for ph in loads:
        executable = ph.flags & PF_X or (implies_exec and ph.flags & PF_R)
        if executable and ph.vaddr + bias <= entry < ph.vaddr + bias + ph.memsz:
            return
    raise LoaderError(f"entry point {entry:#x} is not inside an executable PT_LOAD segment")


def program_header_address(phdrs: list[ProgramHeader], loads: list[ProgramHeader], phoff: int,
                           table_size: int, bias: int) -> int:
    """AT_PHDR: PT_PHDR's address if present, else where e_phoff lands inside a PT_LOAD's file
    bytes (what load_elf_binary computes); 0 when the table is not mapped at all, as Linux."""
    for ph in phdrs:
        if ph.type == PT_PHDR:
            return ph.vaddr + bias
    for ph in loads:
        if ph.offset <= phoff and phoff + table_size <= ph.offset + ph.filesz:
            return ph.vaddr + (phoff - ph.offset) + bias
    return 0


def make_segments(loads: list[ProgramHeader], data: bytes, bias: int,
                  implies_exec: bool = False) -> tuple[Segment, ...]:
    """The segments to map. p_filesz may reach past the end of the file: Linux mmaps the file
    anyway (binfmt_elf's elf_map never compares it with the file size) and the bytes past the
    end read as zeros in the file's last page. Here every byte past the end reads as zero (Linux
    would raise SIGBUS on a page wholly past it): the segment's file part is what the file has."""
    segments = []
    for ph in loads:
        filesz = max(0, min(ph.filesz, len(data) - ph.offset))
        perms = elf_perms(ph.flags)
        if implies_exec and perms & PERM_R:
            perms |= PERM_X
        segments.append(Segment(vaddr=ph.vaddr + bias, memsz=ph.memsz, filesz=filesz, offset=ph.offset,
                                perms=perms, data=bytes(data[ph.offset:ph.offset + filesz])))
    return tuple(segments)


# What the program says about its stack (binfmt_elf's executable_stack).
EXSTACK_DEFAULT, EXSTACK_DISABLE_X, EXSTACK_ENABLE_X = 0, 1, 2


def executable_stack(phdrs: list[ProgramHeader]) -> int:
    """The first PT_GNU_STACK's PF_X decides; without one the architecture's default holds
    (load_elf_binary's loop over the program headers)."""
    for ph in phdrs:
        if ph.type == PT_GNU_STACK:
            return EXSTACK_ENABLE_X if ph.flags & PF_X else EXSTACK_DISABLE_X
    return EXSTACK_DEFAULT


def read_implies_exec(phdrs: list[ProgramHeader], arch: ElfArch) -> bool:
    """An i386 program without PT_GNU_STACK runs with READ_IMPLIES_EXEC: its readable mappings
    are executable (arch/x86/include/asm/elf.h elf_read_implies_exec: mmap_is_ia32() and
    EXSTACK_DEFAULT; mm/mmap.c do_mmap adds PROT_EXEC to PROT_READ). Old and hand-made
    binaries rely on it: the 45-byte "teensy" ELF runs from a segment marked only PF_R. The
    kernel model makes the personality effective (kernel_model/personality.py)."""
    return arch.bits == 32 and executable_stack(phdrs) == EXSTACK_DEFAULT
