"""Every malformed or unsupported file gets a one-line LoaderError saying why."""
from __future__ import annotations

import pytest

from loader.elf import load_elf
from loader.errors import LoaderError
from loader.image import PERM_X
from loader.program_headers import PT_GNU_STACK
from tests.unit.loader.elf_builder import (CODE, CODE_OFFSET, DATA_OFFSET, ET_DYN, PT_NOTE, BuiltElf, build_elf)


def _rejects(data: bytes, pattern: str) -> str:
    with pytest.raises(LoaderError, match=pattern) as info:
        load_elf(data)
    message = str(info.value)
    assert "\n" not in message and message
    return message


def _mutated(bits: int, mutate) -> bytes:
    built = build_elf(bits)
    mutate(built)
    return built.bytes()


def _set_ident(index: int, value: int):
    def mutate(built: BuiltElf) -> None:
        built.data[index] = value
    return mutate


BOTH = pytest.mark.parametrize("bits", [32, 64])


def test_empty_file():
    _rejects(b"", "empty file")


@pytest.mark.parametrize("data", [b"MZ\x90\x00" + bytes(100), b"\x7fELG" + bytes(100), b"\x7f", b"hello world"])
def test_not_elf(data):
    _rejects(data, "not an ELF file")


@BOTH
@pytest.mark.parametrize("length", [4, 16, 51])
def test_truncated_before_the_header_ends(bits, length):
    _rejects(build_elf(bits).bytes()[:length], "truncated")


def test_truncated_elf64_header():
    _rejects(build_elf(64).bytes()[:60], "truncated ELF file: 60 bytes, shorter than the ELF64 header")


@BOTH
def test_truncated_program_header_table(bits):
    built = build_elf(bits)
    _rejects(built.bytes()[:built.phoff + built.phentsize + 4], "program header table .* beyond the end")


@BOTH
def test_segment_bytes_cut_by_the_end_of_the_file_read_as_zeros(bits):
    """Linux maps a PT_LOAD whatever the file's size (binfmt_elf elf_map); bytes past the end
    read as zeros."""
    image = load_elf(build_elf(bits).bytes()[:DATA_OFFSET + 4])
    data = image.segments[-1]
    assert (data.filesz, data.data) == (4, bytes([1, 2, 3, 4]))


@pytest.mark.parametrize("bits, wrong_class", [(64, 1), (32, 2), (64, 0), (32, 3)])
def test_class_byte_is_ignored_as_linux_does(bits, wrong_class):
    """e_machine picks the binfmt handler and so the class (arch/x86/include/asm/elf.h)."""
    assert load_elf(_mutated(bits, _set_ident(4, wrong_class))).entry == build_elf(bits).entry


@BOTH
@pytest.mark.parametrize("machine", [40, 183, 8, 0])  # ARM, AArch64, MIPS, none
def test_wrong_machine(bits, machine):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("machine", machine)), f"unsupported machine e_machine={machine}")


@BOTH
@pytest.mark.parametrize("encoding", [2, 0])  # ELFDATA2MSB, ELFDATANONE
def test_byte_order_byte_is_ignored_as_linux_does(bits, encoding):
    assert load_elf(_mutated(bits, _set_ident(5, encoding))).entry == build_elf(bits).entry


@BOTH
@pytest.mark.parametrize("etype", [0, 1, 4, 0xFE00])  # NONE, REL, CORE, OS-specific
def test_not_an_executable_type(bits, etype):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("type", etype)), f"unsupported ELF type e_type={etype}")


@BOTH
def test_wrong_phentsize(bits):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("phentsize", b.phentsize - 4)), "bad e_phentsize")


@BOTH
def test_no_program_headers(bits):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("phnum", 0)), "no program headers")


@BOTH
def test_program_header_table_beyond_file(bits):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("phoff", 0x100000)), "program header table .* beyond the end")
    _rejects(_mutated(bits, lambda b: b.set_ehdr("phnum", 0xFFFF)), "too many program headers")
    _rejects(_mutated(bits, lambda b: b.set_ehdr("phnum", 1000)), "program header table .* beyond the end")


@BOTH
def test_segment_file_bytes_beyond_the_file(bits):
    """Accepted as Linux's elf_map accepts them (it never compares p_filesz with the file)."""
    def grow(built: BuiltElf) -> None:
        data = built.load_indexes[1]
        built.set_phdr(data, "filesz", 0x100000)
        built.set_phdr(data, "memsz", 0x100000)
    grown = _mutated(bits, grow)
    assert load_elf(grown).segments[-1].filesz == len(grown) - DATA_OFFSET   # what the file has
    far = _mutated(bits, lambda b: b.set_phdr(b.load_indexes[1], "offset", 0x100000))
    assert load_elf(far).segments[-1].filesz == 0                        # all of it reads as zeros


@BOTH
def test_filesz_larger_than_memsz(bits):
    _rejects(_mutated(bits, lambda b: b.set_phdr(b.load_indexes[1], "filesz", 0x300)), "p_filesz 0x300 > p_memsz")


@BOTH
def test_no_pt_load(bits):
    def no_loads(built: BuiltElf) -> None:
        for index in built.load_indexes:
            built.set_phdr(index, "type", PT_NOTE)
    _rejects(_mutated(bits, no_loads), "no PT_LOAD segment")


@BOTH
def test_two_gib_bss_loads(bits):
    """Linux maps a bss of any size lazily: a 2 GiB .bss is a normal Fortran/HPC layout."""
    image = load_elf(_mutated(bits, lambda b: b.set_phdr(b.load_indexes[1], "memsz", 2 << 30)))
    assert image.segments[-1].memsz == 2 << 30


@BOTH
def test_bss_larger_than_user_space_is_refused(bits):
    """What user space cannot hold is refused with where it would end (i386: a compat task's,
    below the sandbox's kernel region at 0xffc00000)."""
    size = 0xFFC0_0000 if bits == 32 else 1 << 47
    _rejects(_mutated(bits, lambda b: b.set_phdr(b.load_indexes[1], "memsz", size)), "reaches kernel space")


@BOTH
def test_offset_and_vaddr_not_congruent(bits):
    _rejects(_mutated(bits, lambda b: b.set_phdr(b.load_indexes[1], "offset", DATA_OFFSET + 8)), "not congruent")


@BOTH
@pytest.mark.parametrize("delta", [0x0, 0x100, CODE_OFFSET + len(CODE) - 1])
def test_overlapping_segments(bits, delta):
    def overlap(built: BuiltElf) -> None:
        data = built.load_indexes[1]
        built.set_phdr(data, "vaddr", built.base + delta)
        built.set_phdr(data, "offset", delta)  # keep offset and vaddr congruent
        built.set_phdr(data, "filesz", 8)
    _rejects(_mutated(bits, overlap), r"PT_LOAD #\d at 0x[0-9a-f]+ overlaps PT_LOAD #\d")


@BOTH
def test_entry_in_a_non_executable_segment(bits):
    def mutate(built: BuiltElf) -> None:
        built.set_ehdr("entry", built.data_vaddr)
        built.set_phdr(built.phdr_index, "type", PT_GNU_STACK)     # no READ_IMPLIES_EXEC on i386
    _rejects(_mutated(bits, mutate), "entry point .* not inside an executable")


def test_i386_without_pt_gnu_stack_reads_imply_exec():
    """Linux gives an i386 program without PT_GNU_STACK READ_IMPLIES_EXEC (elf_read_implies_exec)."""
    image = load_elf(_mutated(32, lambda b: b.set_ehdr("entry", b.data_vaddr)))
    assert all(seg.perms & PERM_X for seg in image.segments)


@BOTH
def test_entry_outside_every_segment(bits):
    _rejects(_mutated(bits, lambda b: b.set_ehdr("entry", b.base + 0x100000)), "not inside an executable")


@BOTH
@pytest.mark.parametrize("etype", [2, ET_DYN])
def test_dynamic_binary_names_its_interpreter(bits, etype):
    """A PT_INTERP is what the kernel loads beside the program (kernel_model/interp.py)."""
    image = load_elf(build_elf(bits, etype=etype, interp=b"/lib/ld-musl-x86_64.so.1").bytes())
    assert image.interp == b"/lib/ld-musl-x86_64.so.1"


@BOTH
def test_interpreter_path_must_be_nul_terminated(bits):
    """load_elf_binary: `elf_interpreter[p_filesz - 1] != '\\0'` is ENOEXEC."""
    built = build_elf(bits, interp=b"/lib/ld.so")
    built.set_phdr(built.interp_index, "filesz", len(b"/lib/ld.so"))
    _rejects(built.bytes(), "PT_INTERP .* not NUL-terminated")


@BOTH
@pytest.mark.parametrize("size", [0, 1, 4097])
def test_interpreter_path_size_outside_linux_bounds(bits, size):
    built = build_elf(bits, interp=b"/lib/ld.so")
    built.set_phdr(built.interp_index, "filesz", size)
    _rejects(built.bytes(), "PT_INTERP .* is not a path")


def test_i386_segment_in_kernel_space():
    _rejects(build_elf(32, base=0xFFBFE000).bytes(), "reaches kernel space .* 0xffc00000")


def test_x86_64_segment_above_user_space():
    _rejects(build_elf(64, base=0x7FFFFFFFE000).bytes(), "reaches kernel space .* 0x800000000000")
    _rejects(build_elf(64, base=0xFFFFFFFF80000000).bytes(), "kernel space")


def test_i386_static_pie_cannot_be_placed_in_kernel_space():
    with pytest.raises(LoaderError, match="pie_base"):
        load_elf(build_elf(32, etype=ET_DYN).bytes(), pie_base=0xFFC00000)


@BOTH
def test_segment_at_the_null_page(bits):
    _rejects(build_elf(bits, base=0).bytes(), "below mmap_min_addr")


def test_i386_static_pie_whose_segments_cross_into_kernel_space():
    data = build_elf(32, etype=ET_DYN).bytes()
    with pytest.raises(LoaderError, match="reaches kernel space"):
        load_elf(data, pie_base=0xFFBFE000)


def test_interpreter_name_with_control_bytes_stays_one_line():
    name = b"/lib/ld\nx\x1b.so"
    built = build_elf(64, interp=name)
    built.set_phdr(built.interp_index, "filesz", len(name))
    message = _rejects(built.bytes(), "not NUL-terminated")
    assert "\\n" in message and "\\x1b" in message and "\n" not in message
