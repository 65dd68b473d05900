"""load_elf on well-formed files: what lands where."""
from __future__ import annotations

import pytest

from loader.elf import detect_arch, load_elf, load_elf_file
from loader.errors import LoaderError
from loader.image import PERM_R, PERM_W, PERM_X
from tests.unit.loader.elf_builder import (CODE, CODE_OFFSET, DATA_FILESZ, DATA_MEMSZ, ET_DYN, build_elf)


@pytest.mark.parametrize("bits, arch, base", [(32, "i386", 0x08048000), (64, "x86_64", 0x400000)])
def test_static_executable_segments_entry_and_headers(bits, arch, base):
    built = build_elf(bits)
    image = load_elf(built.bytes(), path="prog")
    assert (image.path, image.arch, image.bits) == ("prog", arch, bits)
    assert image.entry == base + CODE_OFFSET
    assert (image.is_pie, image.load_bias, image.interp) == (False, 0, None)
    assert image.phent == (56 if bits == 64 else 32)
    assert image.phnum == 3
    text, data = image.segments
    assert (text.vaddr, text.offset, text.filesz, text.memsz) == (base, 0, CODE_OFFSET + len(CODE),
                                                                   CODE_OFFSET + len(CODE))
    assert text.perms == PERM_R | PERM_X
    assert text.data == built.bytes()[:text.filesz]
    assert text.data[CODE_OFFSET:] == CODE
    # An i386 file without PT_GNU_STACK runs with READ_IMPLIES_EXEC (program_headers.read_implies_exec).
    data_perms = PERM_R | PERM_W | (PERM_X if bits == 32 else 0)
    assert (data.vaddr, data.filesz, data.memsz, data.perms) == (base + 0x2000, DATA_FILESZ, DATA_MEMSZ,
                                                                  data_perms)
    assert data.data == bytes(range(1, DATA_FILESZ + 1))


@pytest.mark.parametrize("bits", [32, 64])
def test_phdr_addr_comes_from_pt_phdr(bits):
    built = build_elf(bits, with_phdr=True)
    built.set_phdr(built.phdr_index, "vaddr", built.base + 0x123)  # PT_PHDR wins, as the brief says
    assert load_elf(built.bytes()).phdr_addr == built.base + 0x123


@pytest.mark.parametrize("bits", [32, 64])
def test_phdr_addr_without_pt_phdr_is_where_e_phoff_is_mapped(bits):
    built = build_elf(bits, with_phdr=False)
    image = load_elf(built.bytes())
    assert image.phdr_addr == built.base + built.phoff
    assert image.phnum == 2


def test_phdr_addr_is_zero_when_the_table_is_not_mapped():
    built = build_elf(64, with_phdr=False)
    # The text segment now starts after the program headers: nothing maps e_phoff (Linux: AT_PHDR 0).
    built.set_phdr(built.load_indexes[0], "offset", CODE_OFFSET)
    built.set_phdr(built.load_indexes[0], "vaddr", built.base + CODE_OFFSET)
    built.set_phdr(built.load_indexes[0], "filesz", len(CODE))
    built.set_phdr(built.load_indexes[0], "memsz", len(CODE))
    assert load_elf(built.bytes()).phdr_addr == 0


@pytest.mark.parametrize("bits, default_base", [(32, 0x56555000), (64, 0x555555554000)])
def test_static_pie_is_loaded_at_linux_no_aslr_base(bits, default_base):
    built = build_elf(bits, etype=ET_DYN)
    image = load_elf(built.bytes())
    assert image.is_pie and image.load_bias == default_base
    assert image.entry == default_base + CODE_OFFSET
    assert [seg.vaddr for seg in image.segments] == [default_base, default_base + 0x2000]
    assert image.phdr_addr == default_base + built.phoff
    assert image.symbols.lookup("fib").addr == default_base + CODE_OFFSET + 0x10


def test_static_pie_honours_pie_base():
    image = load_elf(build_elf(64, etype=ET_DYN).bytes(), pie_base=0x7F0000000000)
    assert image.load_bias == 0x7F0000000000
    assert image.segments[0].vaddr == 0x7F0000000000


def test_pie_base_is_ignored_for_et_exec():
    assert load_elf(build_elf(64).bytes(), pie_base=0x7F0000000000).load_bias == 0


@pytest.mark.parametrize("bad_base", [0x1234, -0x1000, 0x800000000000])
def test_pie_base_must_be_a_page_aligned_user_address(bad_base):
    with pytest.raises(LoaderError, match="pie_base"):
        load_elf(build_elf(64, etype=ET_DYN).bytes(), pie_base=bad_base)


def test_segments_may_share_a_page_when_their_bytes_do_not_overlap():
    built = build_elf(64)
    text_end = CODE_OFFSET + len(CODE)
    data_index = built.load_indexes[1]
    built.set_phdr(data_index, "offset", text_end)
    built.set_phdr(data_index, "vaddr", built.base + text_end)
    image = load_elf(built.bytes())
    assert image.segments[1].vaddr == image.segments[0].vaddr + image.segments[0].memsz


def test_segments_are_sorted_by_address_whatever_the_header_order():
    built = build_elf(64)
    text, data = built.load_indexes
    original = bytes(built.data)
    # swap the two PT_LOAD program headers
    a = built.phoff + text * built.phentsize
    b = built.phoff + data * built.phentsize
    built.data[a:a + built.phentsize] = original[b:b + built.phentsize]
    built.data[b:b + built.phentsize] = original[a:a + built.phentsize]
    vaddrs = [seg.vaddr for seg in load_elf(built.bytes()).segments]
    assert vaddrs == sorted(vaddrs) and len(vaddrs) == 2


def test_empty_pt_load_is_dropped():
    built = build_elf(64)
    built.set_phdr(built.load_indexes[1], "filesz", 0)
    built.set_phdr(built.load_indexes[1], "memsz", 0)
    assert len(load_elf(built.bytes()).segments) == 1


@pytest.mark.parametrize("bits, arch", [(32, "i386"), (64, "x86_64")])
def test_detect_arch(bits, arch):
    assert detect_arch(build_elf(bits).bytes()) == arch


@pytest.mark.parametrize("data", [b"", b"\x7fELF", b"#!/bin/sh\necho hi\n" * 4, bytes(200)])
def test_detect_arch_none_for_non_elf(data):
    assert detect_arch(data) is None


def test_detect_arch_none_for_other_machines():
    built = build_elf(64)
    built.set_ehdr("machine", 183)  # EM_AARCH64
    assert detect_arch(built.bytes()) is None


def test_load_elf_file_reads_the_file(tmp_path):
    path = tmp_path / "prog"
    path.write_bytes(build_elf(32).bytes())
    image = load_elf_file(str(path))
    assert image.path == str(path) and image.arch == "i386"


def test_load_elf_file_unreadable_is_a_loader_error(tmp_path):
    with pytest.raises(LoaderError, match="cannot read"):
        load_elf_file(str(tmp_path / "missing"))
    with pytest.raises(LoaderError, match="cannot read"):
        load_elf_file(str(tmp_path))  # a directory
