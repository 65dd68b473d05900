"""Builds small, valid ELF executables byte by byte for the loader tests.

This is test data, not a parser: the tests need files whose every field they know (so they can
mutate exactly one of them) without depending on a compiler. The layout follows what GNU ld
emits for a static executable: the first PT_LOAD maps the file from offset 0 (so the ELF header
and the program headers are in memory), a second PT_LOAD holds data + bss.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

ET_EXEC, ET_DYN = 2, 3
EM_386, EM_X86_64 = 3, 62
PT_LOAD, PT_INTERP, PT_NOTE, PT_PHDR = 1, 3, 4, 6
PF_X, PF_W, PF_R = 1, 2, 4
STT_OBJECT, STT_FUNC = 1, 2
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
SHT_SYMTAB, SHT_STRTAB = 2, 3

PAGE = 0x1000
CODE_OFFSET = 0x400       # file offset of the code inside the first PT_LOAD
INTERP_OFFSET = 0x300     # file offset of the PT_INTERP string (inside the first PT_LOAD)
DATA_OFFSET = 0x1000      # file offset of the data segment
DATA_VADDR_DELTA = 0x2000 # data is mapped at base + 0x2000 (offset and vaddr congruent mod 4096)
DATA_FILESZ = 0x10
DATA_MEMSZ = 0x200
SHDR_AREA = 0x1100        # symbol table, string tables and section headers start here

# (name, offset from the start of the code, size, kind, binding)
DEFAULT_FUNCTIONS = (
    ("_start", 0x00, 0x10, STT_FUNC, STB_GLOBAL),
    ("fib", 0x10, 0x30, STT_FUNC, STB_GLOBAL),
    ("helper", 0x40, 0x08, STT_FUNC, STB_LOCAL),
)
CODE = bytes(range(0x90, 0x90 + 0x50))  # arbitrary recognisable bytes; never executed


@dataclass
class BuiltElf:
    """The bytes plus where each field sits, so a test can mutate one precisely."""
    data: bytearray
    bits: int
    base: int
    entry: int
    phoff: int
    phentsize: int
    load_indexes: list[int] = field(default_factory=list)  # program header index of each PT_LOAD
    phdr_index: int | None = None
    interp_index: int | None = None

    @property
    def code_vaddr(self) -> int:
        return self.base + CODE_OFFSET

    @property
    def data_vaddr(self) -> int:
        return self.base + DATA_VADDR_DELTA + DATA_OFFSET % PAGE

    def phdr_field_offset(self, index: int, name: str) -> tuple[int, str]:
        """File offset and struct format of one field of program header `index`."""
        if self.bits == 64:
            layout = {"type": (0, "<I"), "flags": (4, "<I"), "offset": (8, "<Q"), "vaddr": (16, "<Q"),
                      "paddr": (24, "<Q"), "filesz": (32, "<Q"), "memsz": (40, "<Q"), "align": (48, "<Q")}
        else:
            layout = {"type": (0, "<I"), "offset": (4, "<I"), "vaddr": (8, "<I"), "paddr": (12, "<I"),
                      "filesz": (16, "<I"), "memsz": (20, "<I"), "flags": (24, "<I"), "align": (28, "<I")}
        rel, fmt = layout[name]
        return self.phoff + index * self.phentsize + rel, fmt

    def set_phdr(self, index: int, name: str, value: int) -> None:
        off, fmt = self.phdr_field_offset(index, name)
        struct.pack_into(fmt, self.data, off, value)

    def ehdr_field_offset(self, name: str) -> tuple[int, str]:
        word = "<Q" if self.bits == 64 else "<I"
        w = 8 if self.bits == 64 else 4
        layout = {"type": (16, "<H"), "machine": (18, "<H"), "version": (20, "<I"), "entry": (24, word),
                  "phoff": (24 + w, word), "shoff": (24 + 2 * w, word), "phentsize": (24 + 3 * w + 6, "<H"),
                  "phnum": (24 + 3 * w + 8, "<H")}
        return layout[name]

    def set_ehdr(self, name: str, value: int) -> None:
        off, fmt = self.ehdr_field_offset(name)
        struct.pack_into(fmt, self.data, off, value)

    def set_code(self, code: bytes) -> None:
        """Put `code` at the entry (the start of the text, after the headers) and make the
        first PT_LOAD end with it: a test's own little program."""
        if CODE_OFFSET + len(code) > DATA_OFFSET:
            raise ValueError(f"{len(code)} bytes of code do not fit before the data segment")
        text = self.load_indexes[0]
        self.set_phdr(text, "filesz", CODE_OFFSET + len(code))
        self.set_phdr(text, "memsz", CODE_OFFSET + len(code))
        self.data[CODE_OFFSET:CODE_OFFSET + len(code)] = code

    def bytes(self) -> bytes:
        return bytes(self.data)


def build_elf(bits: int = 64, *, etype: int = ET_EXEC, base: int | None = None, with_phdr: bool = True,
              interp: bytes | None = None, functions=DEFAULT_FUNCTIONS, with_symbols: bool = True) -> BuiltElf:
    """A static (or static-pie with etype=ET_DYN) executable with a code and a data segment."""
    if base is None:
        base = 0 if etype == ET_DYN else (0x400000 if bits == 64 else 0x08048000)
    word = "Q" if bits == 64 else "I"
    ehsize, phentsize, shentsize = (64, 56, 64) if bits == 64 else (52, 32, 40)
    machine = EM_X86_64 if bits == 64 else EM_386

    phdrs: list[tuple[int, int, int, int, int, int]] = []  # type, flags, offset, vaddr, filesz, memsz
    built = BuiltElf(bytearray(), bits, base, base + CODE_OFFSET, ehsize, phentsize)
    n_phdrs = 2 + int(with_phdr) + int(interp is not None)
    if with_phdr:
        built.phdr_index = len(phdrs)
        phdrs.append((PT_PHDR, PF_R, ehsize, base + ehsize, n_phdrs * phentsize, n_phdrs * phentsize))
    if interp is not None:
        built.interp_index = len(phdrs)
        phdrs.append((PT_INTERP, PF_R, INTERP_OFFSET, base + INTERP_OFFSET, len(interp) + 1, len(interp) + 1))
    text_size = CODE_OFFSET + len(CODE)
    built.load_indexes.append(len(phdrs))
    phdrs.append((PT_LOAD, PF_R | PF_X, 0, base, text_size, text_size))
    built.load_indexes.append(len(phdrs))
    phdrs.append((PT_LOAD, PF_R | PF_W, DATA_OFFSET, built.data_vaddr, DATA_FILESZ, DATA_MEMSZ))

    out = bytearray(SHDR_AREA)
    for i, (ptype, flags, offset, vaddr, filesz, memsz) in enumerate(phdrs):
        at = ehsize + i * phentsize
        if bits == 64:
            struct.pack_into("<IIQQQQQQ", out, at, ptype, flags, offset, vaddr, vaddr, filesz, memsz, PAGE)
        else:
            struct.pack_into("<IIIIIIII", out, at, ptype, offset, vaddr, vaddr, filesz, memsz, flags, PAGE)
    if interp is not None:
        out[INTERP_OFFSET:INTERP_OFFSET + len(interp) + 1] = interp + b"\0"
    out[CODE_OFFSET:CODE_OFFSET + len(CODE)] = CODE
    out[DATA_OFFSET:DATA_OFFSET + DATA_FILESZ] = bytes(range(1, DATA_FILESZ + 1))

    shoff, shnum, shstrndx = _append_sections(out, bits, base, functions if with_symbols else ())
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1, 1, 0]) + bytes(8)
    struct.pack_into(f"<16sHHI{word}{word}{word}IHHHHHH", out, 0, ident, etype, machine, 1, built.entry, ehsize,
                     shoff, 0, ehsize, phentsize, len(phdrs), shentsize, shnum, shstrndx)
    built.data = out
    return built


def _append_sections(out: bytearray, bits: int, base: int, functions) -> tuple[int, int, int]:
    """Appends .symtab/.strtab/.shstrtab and the section header table; returns (shoff, shnum, shstrndx)."""
    if not functions:
        return 0, 0, 0
    strtab = bytearray(b"\0")
    symbols = [b""]  # symbol 0 is the null symbol
    sym_size = 24 if bits == 64 else 16
    # gABI: local symbols precede the others, and sh_info of .symtab is one past the last local.
    entries = sorted(list(functions) + [("counter", None, 4, STT_OBJECT, STB_GLOBAL)], key=lambda f: f[4] != STB_LOCAL)
    first_global = 1 + sum(1 for f in entries if f[4] == STB_LOCAL)
    for name, rel, size, kind, binding in entries:
        name_off = len(strtab)
        strtab += name.encode() + b"\0"
        value = base + DATA_VADDR_DELTA if rel is None else base + CODE_OFFSET + rel
        shndx = 2 if rel is None else 1  # any defined section index; the loader uses the value
        info = (binding << 4) | kind
        if bits == 64:
            symbols.append(struct.pack("<IBBHQQ", name_off, info, 0, shndx, value, size))
        else:
            symbols.append(struct.pack("<IIIBBH", name_off, value, size, info, 0, shndx))
    symbols[0] = bytes(sym_size)
    symtab = b"".join(symbols)
    shstrtab = b"\0.symtab\0.strtab\0.shstrtab\0.text\0.data\0"

    def append_aligned(blob: bytes) -> int:
        offset = len(out)
        out.extend(blob)
        out.extend(bytes(-len(out) % 8))
        return offset

    symtab_off = append_aligned(symtab)
    strtab_off = append_aligned(bytes(strtab))
    shstr_off = append_aligned(shstrtab)
    shoff = len(out)
    text_size = CODE_OFFSET + len(CODE)
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        # name, type, flags, addr, offset, size, link, info, align, entsize
        (shstrtab.index(b".text"), 1, 6, base + CODE_OFFSET, CODE_OFFSET, text_size - CODE_OFFSET, 0, 0, 16, 0),
        (shstrtab.index(b".data"), 1, 3, base + DATA_VADDR_DELTA, DATA_OFFSET, DATA_FILESZ, 0, 0, 16, 0),
        (shstrtab.index(b".symtab"), SHT_SYMTAB, 0, 0, symtab_off, len(symtab), 4, first_global, 8, sym_size),
        (shstrtab.index(b".strtab"), SHT_STRTAB, 0, 0, strtab_off, len(strtab), 0, 0, 1, 0),
        (shstrtab.index(b".shstrtab"), SHT_STRTAB, 0, 0, shstr_off, len(shstrtab), 0, 0, 1, 0),
    ]
    for name, stype, flags, addr, offset, size, link, info, salign, entsize in sections:
        if bits == 64:
            out.extend(struct.pack("<IIQQQQIIQQ", name, stype, flags, addr, offset, size, link, info, salign, entsize))
        else:
            out.extend(struct.pack("<IIIIIIIIII", name, stype, flags, addr, offset, size, link, info, salign, entsize))
    return shoff, len(sections), 5
