"""The vDSO image as a C library reads it (pyelftools standing in for glibc's setup_vdso and
dl_vdso_vsym): an ET_DYN object with one PT_LOAD at 0 and a PT_DYNAMIC, every function a global
FUNC symbol of .text at its version (LINUX_2.6, i386's __kernel_* LINUX_2.5), the SysV hash
(musl's lookup) and the GNU hash (glibc's) finding each one, and each symbol's bytes the
assembled code."""
import io

import pytest
from elftools.elf.dynamic import DynamicSegment
from elftools.elf.elffile import ELFFile
from elftools.elf.hash import GNUHashSection

from kernel_model.vdso.code import CODE
from kernel_model.vdso.elf_image import IMAGE_PAGES, SONAME, elf_hash, vdso_image
from kernel_model.vdso.gnu_hash import gnu_hash
from kernel_model.vdso.source import FUNCTIONS

LINUX_EXPORTS = {
    # arch/x86/entry/vdso/vdso.lds.S and vdso32/vdso32.lds.S
    "x86_64": {"__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_getcpu",
               "__vdso_clock_getres"},
    "i386": {"__kernel_vsyscall", "__kernel_sigreturn", "__kernel_rt_sigreturn",
             "__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres",
             "__vdso_clock_gettime64", "__vdso_clock_getres_time64", "__vdso_getcpu"},
}


def test_elf_hash_is_the_abi_s():
    # glibc's dl_vdso_vsym looks LINUX_2.6 up by this hash (elf/dl-lookup.c _dl_elf_hash)
    assert elf_hash(b"LINUX_2.6") == 0x3AE75F6
    assert elf_hash(b"printf") == 0x77905A6


@pytest.mark.parametrize("arch", sorted(FUNCTIONS))
def test_the_image_exports_linux_s_symbols_at_their_versions(arch):
    image = vdso_image(arch)
    assert len(image.data) == IMAGE_PAGES * 4096
    elf = ELFFile(io.BytesIO(image.data))
    assert elf["e_type"] == "ET_DYN"
    loads = [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
    assert len(loads) == 1 and loads[0]["p_vaddr"] == 0 and loads[0]["p_offset"] == 0
    dynamic = next(seg for seg in elf.iter_segments() if isinstance(seg, DynamicSegment))
    assert [tag.soname for tag in dynamic.iter_tags("DT_SONAME")] == [SONAME[arch].decode()]
    symbols = {sym.name: sym for sym in elf.get_section_by_name(".dynsym").iter_symbols() if sym.name}
    assert set(symbols) == LINUX_EXPORTS[arch] == set(image.symbols)
    versions = elf.get_section_by_name(".gnu.version")
    text = elf.get_section_by_name(".text")
    for index, (name, sym) in enumerate(symbols.items(), start=1):
        assert (sym["st_info"]["bind"], sym["st_info"]["type"]) == ("STB_GLOBAL", "STT_FUNC")
        assert sym["st_shndx"] == elf.get_section_index(".text")
        assert text["sh_addr"] <= sym["st_value"] < text["sh_addr"] + text["sh_size"]
        expected = "LINUX_2.5" if name.startswith("__kernel_") else "LINUX_2.6"
        version = versions.get_symbol(index)["ndx"]
        _, names = elf.get_section_by_name(".gnu.version_d").get_version(version)
        assert next(names).name == expected, name
        code = CODE[arch][name]
        assert image.data[sym["st_value"]:sym["st_value"] + len(code)] == code
        assert sym["st_value"] == image.symbols[name]
    hashes = elf.get_section_by_name(".hash")
    assert hashes["sh_addr"] == next(dynamic.iter_tags("DT_HASH"))["d_ptr"]
    assert {name: hashes.get_symbol(name)["st_value"] for name in symbols} == image.symbols


def test_gnu_hash_is_the_toolchain_s():
    # elf/dl-lookup.c dl_new_hash: h * 33 + c from 5381 (the values readelf and ld agree on)
    assert gnu_hash(b"") == 5381
    assert gnu_hash(b"printf") == 0x156B2BB8


@pytest.mark.parametrize("arch", sorted(FUNCTIONS))
def test_the_gnu_hash_finds_each_symbol_as_glibc_looks_it_up(arch):
    """glibc's loader prefers DT_GNU_HASH (elf/dl-lookup.c _dl_setup_hash): its Bloom filter,
    bucket and chain (pyelftools' reading of the same table, which asks the filter first) lead
    to every symbol, and a name the vDSO does not define is not found."""
    image = vdso_image(arch)
    elf = ELFFile(io.BytesIO(image.data))
    dynamic = next(seg for seg in elf.iter_segments() if isinstance(seg, DynamicSegment))
    table = elf.get_section_by_name(".gnu.hash")
    assert isinstance(table, GNUHashSection)
    assert table["sh_addr"] == next(dynamic.iter_tags("DT_GNU_HASH"))["d_ptr"]
    symbols = [sym.name for sym in elf.get_section_by_name(".dynsym").iter_symbols() if sym.name]
    assert {name: table.get_symbol(name)["st_value"] for name in symbols} == image.symbols
    assert table.get_number_of_symbols() == len(symbols) + 1           # every one is hashed
    assert table.get_symbol("__vdso_clock_settime") is None
