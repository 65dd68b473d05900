"""The vDSO's ELF image, written from code.py: a small shared object linked at address 0.

What a C library asks of it (glibc's setup_vdso and dl_vdso_vsym, musl's __vdsosym): an ELF
header whose program headers give one PT_LOAD and the PT_DYNAMIC; in the dynamic section the
hash tables, the SysV one (DT_HASH) musl reads and the GNU one (DT_GNU_HASH, gnu_hash.py) glibc
reads, both as Linux links it, the symbol and string tables, the soname, and the symbol versions
(DT_VERSYM, DT_VERDEF): every exported function is defined at a version, LINUX_2.6 for the
clocks and LINUX_2.5 for i386's __kernel_* entry points, as Linux's vdso.lds.S and
vdso32.lds.S define them, and the lookups name that version. What an unwinder asks of it
(libgcc's _Unwind_Find_FDE, gdb): a PT_GNU_EH_FRAME over .eh_frame_hdr, and the .eh_frame
that describes every function's frame (eh_frame.py). Section headers are there for readelf
and gdb. Addresses in the image are offsets from its first byte (p_vaddr 0), as in
Linux's; the loader adds where the kernel mapped it.
"""
from __future__ import annotations

import functools
import struct
from typing import NamedTuple

from kernel_model.memory.layout import PAGE
from kernel_model.vdso.code import CFA_ROWS, CODE
from kernel_model.vdso.eh_frame import eh_frame, eh_frame_hdr
from kernel_model.vdso.gnu_hash import bucket_count, gnu_hash_table, in_bucket_order
from kernel_model.vdso.source import FUNCTIONS

SONAME = {"x86_64": b"linux-vdso.so.1", "i386": b"linux-gate.so.1"}
IMAGE_PAGES = 2                          # [vdso], as the host's
EM = {"x86_64": 62, "i386": 3}           # EM_X86_64, EM_386
PT_LOAD, PT_DYNAMIC, PT_GNU_EH_FRAME = 1, 2, 0x6474E550
PF_R, PF_X = 4, 1
DT_NULL, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_SONAME = 0, 4, 5, 6, 10, 11, 14
DT_GNU_HASH, DT_VERSYM, DT_VERDEF, DT_VERDEFNUM = 0x6FFFFEF5, 0x6FFFFFF0, 0x6FFFFFFC, 0x6FFFFFFD
SHT_PROGBITS, SHT_STRTAB, SHT_HASH, SHT_DYNAMIC, SHT_DYNSYM = 1, 3, 5, 6, 11
SHT_GNU_HASH, SHT_GNU_VERDEF, SHT_GNU_VERSYM = 0x6FFFFFF6, 0x6FFFFFFD, 0x6FFFFFFF
SHF_ALLOC, SHF_EXECINSTR = 2, 4
STB_GLOBAL, STT_FUNC = 1, 2
VER_FLG_BASE = 1
PROGRAM_HEADERS = 3                      # PT_LOAD, PT_DYNAMIC, PT_GNU_EH_FRAME


class VdsoImage(NamedTuple):
    data: bytes                          # IMAGE_PAGES pages
    symbols: dict[str, int]              # name -> offset in the image


def elf_hash(name: bytes) -> int:
    """The System V ABI's hash function (DT_HASH buckets, Verdef's vd_hash)."""
    h = 0
    for byte in name:
        h = ((h << 4) + byte) & 0xFFFFFFFF
        high = h & 0xF0000000
        if high:
            h ^= high >> 24
        h &= ~high & 0xFFFFFFFF
    return h


class _Strings:
    def __init__(self):
        self.data = bytearray(b"\0")

    def add(self, text: bytes) -> int:
        offset = len(self.data)
        self.data += text + b"\0"
        return offset


class _Layout:
    """Appends aligned pieces; remembers each one's offset."""

    def __init__(self, start: int):
        self.data = bytearray(start)
        self.offsets: dict[str, tuple[int, int]] = {}

    def put(self, name: str, blob: bytes, align: int) -> int:
        self.data += bytes(-len(self.data) % align)
        offset = len(self.data)
        self.data += blob
        self.offsets[name] = (offset, len(blob))
        return offset


def _versions(arch: str) -> list[bytes]:
    """The version names in definition order (index 2 on; index 1 is the object itself)."""
    names: list[bytes] = []
    for _, version, _ in FUNCTIONS[arch]:
        if version.encode() not in names:
            names.append(version.encode())
    return names


def _verdefs(arch: str, strings: _Strings) -> tuple[bytes, int]:
    """Verdef/Verdaux pairs: the base definition (the soname), then each version."""
    entries = [(VER_FLG_BASE, SONAME[arch])] + [(0, name) for name in _versions(arch)]
    blob = bytearray()
    for index, (flags, name) in enumerate(entries, start=1):
        last = index == len(entries)
        blob += struct.pack("<HHHHIII", 1, flags, index, 1, elf_hash(name), 20, 0 if last else 28)
        blob += struct.pack("<II", strings.add(name), 0)
    return bytes(blob), len(entries)


def _hash_table(names: list[bytes]) -> bytes:
    """nbucket, nchain, buckets, chains over the symbols (index 0 is the null symbol); as many
    buckets as the GNU table has, as GNU ld sizes both."""
    count = len(names) + 1
    nbucket = bucket_count(len(names))
    buckets, chains = [0] * nbucket, [0] * count
    for index, name in enumerate(names, start=1):
        bucket = elf_hash(name) % nbucket
        chains[index], buckets[bucket] = buckets[bucket], index
    return struct.pack(f"<{2 + nbucket + count}I", nbucket, count, *buckets, *chains)


def _symbol(wide: bool, name: int, value: int, size: int) -> bytes:
    info = STB_GLOBAL << 4 | STT_FUNC
    text = _SECTION_INDEX[".text"]
    if wide:
        return struct.pack("<IBBHQQ", name, info, 0, text, value, size)
    return struct.pack("<IIIBBH", name, value, size, info, 0, text)


@functools.lru_cache(maxsize=2)
def vdso_image(arch: str) -> VdsoImage:
    wide = arch == "x86_64"
    word, ehsize, phentsize, shentsize = (8, 64, 56, 64) if wide else (4, 52, 32, 40)
    functions = FUNCTIONS[arch]
    strings = _Strings()
    soname = strings.add(SONAME[arch])
    version_of = {name.encode(): version for name, version, _ in functions}
    names = in_bucket_order(list(version_of))          # .dynsym's order: the GNU table's
    name_offsets = [strings.add(name) for name in names]
    verdef, verdef_count = _verdefs(arch, strings)
    version_index = {name: index for index, name in enumerate(_versions(arch), start=2)}
    out = _Layout(ehsize + PROGRAM_HEADERS * phentsize)
    out.put(".hash", _hash_table(names), 8)
    out.put(".gnu.hash", gnu_hash_table(names, wide), 8)
    symtab_at = out.put(".dynsym", bytes(24 if wide else 16) * (len(names) + 1), 8)
    strtab_at = out.put(".dynstr", bytes(strings.data), 1)
    versym = struct.pack(f"<{len(names) + 1}H", 0,
                         *(version_index[version_of[name].encode()] for name in names))
    out.put(".gnu.version", versym, 2)
    out.put(".gnu.version_d", verdef, 4)
    dynamic = [(DT_HASH, out.offsets[".hash"][0]), (DT_GNU_HASH, out.offsets[".gnu.hash"][0]),
               (DT_STRTAB, strtab_at), (DT_SYMTAB, symtab_at),
               (DT_STRSZ, len(strings.data)), (DT_SYMENT, 24 if wide else 16), (DT_SONAME, soname),
               (DT_VERSYM, out.offsets[".gnu.version"][0]),
               (DT_VERDEF, out.offsets[".gnu.version_d"][0]), (DT_VERDEFNUM, verdef_count),
               (DT_NULL, 0)]
    fmt = "<qQ" if wide else "<iI"
    out.put(".dynamic", b"".join(struct.pack(fmt, *pair) for pair in dynamic), word)
    symbols: dict[str, int] = {}
    text_start = len(out.data) + (-len(out.data) % 16)
    for name, _, _ in functions:
        symbols[name] = out.put(name, CODE[arch][name], 16)
    text_end = len(out.data)
    if text_end > PAGE:          # source.py's functions find the clock page from their own page
        raise AssertionError(f"the {arch} vDSO's code ends past its first page ({text_end:#x})")
    out.offsets[".text"] = (text_start, text_end - text_start)
    _put_unwind_tables(out, arch, symbols)
    symbol_bytes = b"".join(_symbol(wide, offset, symbols[name.decode()], len(CODE[arch][name.decode()]))
                            for name, offset in zip(names, name_offsets))
    out.data[symtab_at + (24 if wide else 16):symtab_at + (24 if wide else 16) + len(symbol_bytes)] = symbol_bytes
    _put_sections(out, wide, shentsize, word, verdef_count)
    shoff, _ = out.offsets["section headers"]
    size = len(out.data)
    if size > IMAGE_PAGES * PAGE:
        raise AssertionError(f"the {arch} vDSO image is {size} bytes")
    dynamic_at, dynamic_size = out.offsets[".dynamic"]
    header = _elf_header(arch, wide, ehsize, phentsize, shentsize, shoff)
    hdr_at, hdr_size = out.offsets[".eh_frame_hdr"]
    phdrs = _program_header(wide, PT_LOAD, PF_R | PF_X, 0, size, PAGE) + \
        _program_header(wide, PT_DYNAMIC, PF_R, dynamic_at, dynamic_size, word) + \
        _program_header(wide, PT_GNU_EH_FRAME, PF_R, hdr_at, hdr_size, 4)
    out.data[:len(header) + len(phdrs)] = header + phdrs
    return VdsoImage(bytes(out.data) + bytes(IMAGE_PAGES * PAGE - size), symbols)


def _put_unwind_tables(out: _Layout, arch: str, symbols: dict[str, int]) -> None:
    """.eh_frame_hdr then .eh_frame after the code (the header's size is known from the count)."""
    word = 8 if arch == "x86_64" else 4
    functions = [(name, symbols[name], len(CODE[arch][name]), CFA_ROWS[arch][name])
                 for name, _, _ in FUNCTIONS[arch]]
    hdr_at = len(out.data) + (-len(out.data) % 4)
    frame_at = hdr_at + 12 + 8 * len(functions)
    frame_at += -frame_at % word
    frames, table = eh_frame(arch, frame_at, functions)
    out.put(".eh_frame_hdr", eh_frame_hdr(hdr_at, frame_at, table), 4)
    out.put(".eh_frame", frames, word)
    if out.offsets[".eh_frame"][0] != frame_at:
        raise AssertionError(f"the {arch} vDSO's .eh_frame is not where its header says")


# (name, type, flags, linked section, entry size) of the sections after the null one, in order
_SECTIONS = ((".hash", SHT_HASH, SHF_ALLOC, ".dynsym", 4),
             (".gnu.hash", SHT_GNU_HASH, SHF_ALLOC, ".dynsym", 0),
             (".dynsym", SHT_DYNSYM, SHF_ALLOC, ".dynstr", 0), (".dynstr", SHT_STRTAB, SHF_ALLOC, None, 0),
             (".gnu.version", SHT_GNU_VERSYM, SHF_ALLOC, ".dynsym", 2),
             (".gnu.version_d", SHT_GNU_VERDEF, SHF_ALLOC, ".dynstr", 0),
             (".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, None, 0),
             (".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC, None, 0), (".eh_frame", SHT_PROGBITS, SHF_ALLOC, None, 0),
             (".dynamic", SHT_DYNAMIC, SHF_ALLOC, ".dynstr", 0), (".shstrtab", SHT_STRTAB, 0, None, 0))
_SECTION_INDEX = {name: index for index, (name, *_) in enumerate(_SECTIONS, start=1)}


def _put_sections(out: _Layout, wide: bool, shentsize: int, word: int, verdef_count: int) -> None:
    names = _Strings()
    name_at = {name: names.add(name.encode()) for name, *_ in _SECTIONS}
    out.put(".shstrtab", bytes(names.data), 1)
    headers = [bytes(shentsize)]
    for name, kind, flags, linked, entsize in _SECTIONS:
        link = _SECTION_INDEX[linked] if linked else 0
        offset, size = out.offsets[name]
        address = offset if flags & SHF_ALLOC else 0
        if name == ".dynsym":
            entsize, info = (24 if wide else 16), 1        # sh_info: the first global symbol
        elif name == ".gnu.version_d":
            info = verdef_count                             # sh_info: the number of Verdefs
        else:
            info = 0
        if name == ".dynamic":
            entsize = 2 * word
        fields = (name_at[name], kind, flags, address, offset, size, link, info, word, entsize)
        headers.append(struct.pack("<IIQQQQIIQQ" if wide else "<IIIIIIIIII", *fields))
    out.put("section headers", b"".join(headers), word)


def _elf_header(arch: str, wide: bool, ehsize: int, phentsize: int, shentsize: int,
                shoff: int) -> bytes:
    ident = b"\x7fELF" + bytes((2 if wide else 1, 1, 1, 0)) + bytes(8)   # class, LSB, version, SYSV
    fields = (3, EM[arch], 1, 0, ehsize, shoff, 0, ehsize, phentsize, PROGRAM_HEADERS, shentsize,
              len(_SECTIONS) + 1, len(_SECTIONS))                      # ET_DYN; e_shstrndx last
    return ident + struct.pack("<HHIQQQIHHHHHH" if wide else "<HHIIIIIHHHHHH", *fields)


def _program_header(wide: bool, kind: int, flags: int, offset: int, size: int, align: int) -> bytes:
    if wide:
        return struct.pack("<IIQQQQQQ", kind, flags, offset, offset, offset, size, size, align)
    return struct.pack("<IIIIIIII", kind, offset, offset, offset, size, size, flags, align)
