"""The 45-byte "teensy" ELF (Brian Raiter, "A Whirlwind Tutorial on Creating Really Teensy ELF
Executables for Linux"): its one program header overlaps the ELF header from byte 4, the file
ends inside the ELF header, its PT_LOAD is PF_R only and claims 64 KiB past the file's end.
Linux runs it (exec reads the header into a zero-filled buffer; an i386 program without
PT_GNU_STACK has READ_IMPLIES_EXEC) and it exits 42."""
import subprocess

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from loader.elf import load_elf
from loader.errors import LoaderError
from loader.image import PERM_R, PERM_X

from .tinyelf import write_program

TEENSY = bytes.fromhex(
    "7f454c46" "01000000" "00000000" "00000100"    # e_ident = p_type 1, p_offset 0, p_vaddr 0x10000
    "0200" "0300" "20000100" "20000100"            # e_type, e_machine, e_version = p_filesz, e_entry = p_memsz
    "04000000"                                     # e_phoff = p_flags (PF_R)
    "b32a31c0" "40cd8000"                          # _start: mov bl, 42; xor eax, eax; inc eax; int 0x80
    "3400" "2000" "01")                            # e_ehsize, e_phentsize, e_phnum (its high byte: past the end)


def test_it_is_the_45_byte_file():
    assert len(TEENSY) == 45


def test_the_loader_accepts_what_linux_accepts():
    image = load_elf(TEENSY)
    assert (image.arch, image.entry, image.phdr_addr) == ("i386", 0x10020, 0x10004)
    (segment,) = image.segments
    assert (segment.vaddr, segment.memsz, segment.filesz) == (0x10000, 0x10020, 45)
    assert segment.perms == PERM_R | PERM_X


def test_it_exits_42_under_trapline(tmp_path):
    path = write_program(tmp_path, "teensy", TEENSY)
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(), stderr=CapturedOutput()))
    assert kernel.run(kernel.spawn(str(path).encode(), [b"teensy"], [])) == 42 << 8


def test_it_exits_42_natively(tmp_path):
    path = write_program(tmp_path, "teensy", TEENSY)
    assert subprocess.run([str(path)], timeout=10).returncode == 42


@pytest.mark.parametrize("cut", [4, 20, 32])
def test_shorter_files_are_refused_with_the_reason(cut):
    with pytest.raises(LoaderError, match="truncated ELF file") as info:
        load_elf(TEENSY[:cut])
    assert "\n" not in str(info.value)
