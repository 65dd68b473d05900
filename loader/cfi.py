"""Call-frame information from `.eh_frame`: how to find a function's caller at any instruction.

Code built without frame pointers (Debian's binaries and libraries) can only be unwound with the
CFI the compiler emits for exception handling (DWARF 5 section 6.4, the Call Frame Information;
the `.eh_frame` form and its `.eh_frame_hdr` search table: LSB 5.0 "Exception Frames"). For an
address the table gives the Canonical Frame Address (the caller's stack pointer before its
`call`: a register plus an offset) and where the return address and the callee-saved registers
were saved (at an offset from the CFA, unchanged, or undefined — an undefined return address
marks the outermost frame, as glibc's `_start` and `clone` say).

Everything is read from a LoadedImage's segments, where ld.so and the kernel find it too:
PT_GNU_EH_FRAME locates `.eh_frame_hdr`, whose sorted table of (initial location, FDE) pairs
finds the FDE of an address by binary search; pyelftools decodes that FDE (and its CIE) into
rows. A program gcc linked -static has no `.eh_frame_hdr`: its FDEs are found from
`__EH_FRAME_BEGIN__`, as libgcc's unwinder finds them in such a program, or, stripped, from
the section headers' `.eh_frame`, as gdb and perf do. Where functions start and end (the FDE
table, their ranges) comes from the FDEs' headers alone (loader/fde_headers.py), read once per
file at its place (loader/fde_index.py); an FDE's instructions are decoded only when a frame at
one of its addresses is asked for. Nothing here knows the emulator; the profiler's unwinder (instrumenter/profiler/) applies
the rows to a thread's registers and memory.
"""
from __future__ import annotations

import bisect
from functools import partial
import io
import struct
from typing import NamedTuple

from elftools.dwarf.callframe import FDE, CallFrameInfo, RegisterRule
from elftools.dwarf.constants import DW_CFA_GNU_args_size
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.dwarf.structs import DWARFStructs
from elftools.elf.structs import ELFStructs

from loader.fde_headers import FdeHeaderError
from loader.fde_index import FdeIndex, index_for
from loader.image import LoadedImage

PT_GNU_EH_FRAME = 0x6474E550

# DWARF register numbers (System V psABI: x86-64 Figure 3.36; i386 "DWARF Register Number
# Mapping" of the Intel386 supplement). The return-address column is the IP.
DWARF_REGISTERS = {
    64: ("rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
         "r12", "r13", "r14", "r15", "rip"),
    32: ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eip"),
}

# DW_EH_PE pointer encodings (LSB 5.0 10.5): format in the low nibble, application in the high.
# absptr (0x00) is the object's word; the LEB128 forms (0x01, 0x09) never appear in the header.
_FORMATS = {0x02: "<H", 0x03: "<I", 0x04: "<Q", 0x0A: "<h", 0x0B: "<i", 0x0C: "<q"}
DW_EH_PE_omit, DW_EH_PE_pcrel, DW_EH_PE_datarel = 0xFF, 0x10, 0x30


class CfiUnsupported(Exception):
    """The CFI asks for something this reader does not evaluate (a DWARF expression)."""


class FrameRule(NamedTuple):
    """How to find the caller's frame at one address.

    `cfa`: (register name, offset): CFA = register + offset, or ("expression", ops): the value
    of a DWARF expression (ops: (operation name, arguments) pairs, DWARF 5 2.5; PLT entries
    and functions that realign the stack use them). `saved`: register name -> rule, where a
    rule is ("at", n): saved at CFA + n; ("value", n): its value is CFA + n; ("same",):
    unchanged; ("undefined",): not recoverable (for the IP: the outermost frame);
    ("register", name): in another register; ("at-expression", ops) / ("expression", ops):
    saved at / equal to the expression's value, evaluated with the CFA pushed first.
    Registers not named are unchanged (callee-saved by the ABI) or unknown (caller-saved);
    the unwinder knows which.
    """
    cfa: tuple
    saved: dict
    return_register: str


class CallFrameTable:
    """The CFI of one mapped object, decoded lazily FDE by FDE."""

    def __init__(self, image: LoadedImage):
        self.image = image
        self._names = DWARF_REGISTERS[image.bits]
        self._rows: dict[int, tuple] = {}         # FDE address -> (start, row starts, rows, end)
        self._rules: dict[int, FrameRule | None] = {}   # address -> its rule (samples repeat)
        self._cfi = None                          # pyelftools' reader, made when rows are asked
        # the FDE table, shared by every table of the same file at the same place
        self._index = index_for(image, self._read_index)

    def _read_index(self) -> FdeIndex:
        self._index = FdeIndex(self.image.bits, partial(_read_segments, self.image.segments))
        try:
            self._read_header()
        except (CfiUnsupported, struct.error, ValueError, KeyError) as exc:
            self._index.problem = f"unreadable .eh_frame_hdr: {exc}"
            self._index.table = self._index.starts = []
        return self._index

    @property
    def problem(self) -> str | None:
        """Why the object has no FDE table (one line), else None."""
        return self._index.problem

    def __bool__(self) -> bool:
        return bool(self._index.table)

    # ---- the object's memory, from its segments ----------------------------------------------
    def _read(self, address: int, size: int) -> bytes:
        return _read_segments(self.image.segments, address, size)

    def _segment_end(self, address: int) -> int:
        for seg in self.image.segments:
            if seg.vaddr <= address < seg.vaddr + seg.filesz:
                return seg.vaddr + seg.filesz
        raise ValueError(f"{address:#x} is not in the object's file-backed segments")

    # ---- .eh_frame_hdr (LSB 5.0 10.6.2) -------------------------------------------------------
    def _read_header(self) -> None:
        hdr = self._eh_frame_hdr_address()
        if hdr is None:
            if not self._read_registered_frames():
                self._index.problem = "no PT_GNU_EH_FRAME"
            return
        version, ptr_enc, count_enc, table_enc = self._read(hdr, 4)
        if version != 1:
            raise CfiUnsupported(f".eh_frame_hdr version {version}")
        at = hdr + 4
        self._index.eh_frame, at = self._decode(ptr_enc, at, hdr)
        if count_enc == DW_EH_PE_omit or table_enc == DW_EH_PE_omit:
            self._index.problem = ".eh_frame_hdr has no search table"
            return
        count, at = self._decode(count_enc, at, hdr)
        size = struct.calcsize(_FORMATS.get(table_enc & 0x0F) or ("<I" if self.image.bits == 32 else "<Q"))
        raw = memoryview(self._read(at, 2 * size * count))
        if table_enc == DW_EH_PE_datarel | 0x0B:
            # what every linker writes (datarel sdata4): the whole table in one unpack, not
            # 2 x 8 500 decodes (glibc's libc.so.6: most of a profiled run's start-up)
            mask = (1 << self.image.bits) - 1
            table = [((start + hdr) & mask, (fde + hdr) & mask)
                     for start, fde in struct.iter_unpack("<ii", raw)]
        else:
            table = []
            for i in range(count):
                start, _ = self._decode(table_enc, at + 2 * size * i, hdr, raw[2 * size * i:])
                fde, _ = self._decode(table_enc, at + 2 * size * i + size, hdr, raw[2 * size * i + size:])
                table.append((start, fde))
        table.sort()
        self._index.table = table
        self._index.starts = [start for start, _ in table]
        self._index.eh_frame_end = self._segment_end(self._index.eh_frame)

    def _read_registered_frames(self) -> bool:
        """Without .eh_frame_hdr (gcc links -static programs without --eh-frame-hdr), find the
        FDEs as libgcc does for such a program at run time: crtbegin registers
        `__EH_FRAME_BEGIN__` (__register_frame_info), and the unwinder walks .eh_frame from there,
        entry by entry, to its zero terminator (crtend's `__FRAME_END__`). A stripped program
        has neither symbol: its section headers still say where `.eh_frame` is, which is where
        gdb and perf read it. False without either."""
        bounds = self._eh_frame_bounds()
        if bounds is None:
            return False
        start, stop = bounds
        # An FDE's CIE may precede __EH_FRAME_BEGIN__ (crt1's and crti's part of .eh_frame):
        # the entries are read within their whole segment, walked from the start.
        base = next(seg.vaddr for seg in self.image.segments
                    if seg.vaddr <= start < seg.vaddr + seg.filesz)
        self._index.eh_frame, self._index.eh_frame_end = base, stop
        data = self._index.frame_bytes()
        # Only the FDEs' headers are read (loader/fde_headers.py): their instructions are
        # decoded when a frame asks. A probe check needs the starts alone, and parsing every
        # entry in full here was most of a traced bash-static's start.
        headers = self._index.headers().walk(start - base, len(data))
        for header in headers:
            self._index.ranges[header.address] = (header.start, header.end)
        table = sorted((header.start, header.address) for header in headers)
        self._index.table, self._index.starts = table, [first for first, _ in table]
        return bool(table)

    def _call_frame_info(self) -> CallFrameInfo:
        if self._cfi is None:
            data = self._index.frame_bytes()
            structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=self.image.bits // 8)
            self._cfi = CallFrameInfo(io.BytesIO(data), len(data), self._index.eh_frame, structs,
                                      for_eh_frame=True)
        return self._cfi

    def _eh_frame_bounds(self) -> tuple[int, int] | None:
        """[start, stop) of the .eh_frame entries to walk: from crtbegin's symbol, else from
        the section headers."""
        begin = self.image.symbols.lookup("__EH_FRAME_BEGIN__")
        if begin is not None:
            start = begin.addr
            limit = self._segment_end(start)
            end = self.image.symbols.lookup("__FRAME_END__")
            return start, end.addr + 4 if end is not None and start < end.addr < limit else limit
        section = self.image.sections.get(".eh_frame")
        if section is None or not section[1]:
            return None
        start, size = section
        return start, min(start + size, self._segment_end(start))

    def _eh_frame_hdr_address(self) -> int | None:
        image = self.image
        if not image.phdr_addr:
            return None
        structs = ELFStructs(little_endian=True, elfclass=image.bits)
        structs.create_basic_structs()
        structs.create_advanced_structs(e_type="ET_DYN" if image.is_pie else "ET_EXEC",
                                        e_machine="EM_X86_64" if image.bits == 64 else "EM_386",
                                        e_ident_osabi="ELFOSABI_SYSV")
        raw = self._read(image.phdr_addr, image.phent * image.phnum)
        for i in range(image.phnum):
            ph = structs.Elf_Phdr.parse(raw[i * image.phent:(i + 1) * image.phent])
            if ph.p_type in (PT_GNU_EH_FRAME, "PT_GNU_EH_FRAME"):
                return ph.p_vaddr + image.load_bias
        return None

    def _decode(self, encoding: int, address: int, hdr: int, raw: bytes | None = None):
        """One DW_EH_PE-encoded pointer at `address`: (value, address after it)."""
        form = encoding & 0x0F
        if form and form not in _FORMATS:
            raise CfiUnsupported(f"pointer encoding {encoding:#x}")
        fmt = _FORMATS.get(form) or ("<I" if self.image.bits == 32 else "<Q")
        size = struct.calcsize(fmt)
        data = raw[:size] if raw is not None else self._read(address, size)
        value = struct.unpack(fmt, data)[0]
        application = encoding & 0x70
        if application == DW_EH_PE_pcrel:
            value += address
        elif application == DW_EH_PE_datarel:
            value += hdr
        elif application:
            raise CfiUnsupported(f"pointer encoding {encoding:#x}")
        return value & ((1 << self.image.bits) - 1), address + size

    # ---- rows ---------------------------------------------------------------------------------
    def rule_at(self, pc: int) -> FrameRule | None:
        """The rule in force at `pc`, or None when no FDE covers it (code without CFI)."""
        if pc in self._rules:
            return self._rules[pc]
        rule = self._rules[pc] = self._find_rule(pc)
        return rule

    def _find_rule(self, pc: int) -> FrameRule | None:
        i = bisect.bisect_right(self._index.starts, pc) - 1
        if i < 0:
            return None
        fde_address = self._index.table[i][1]
        rows = self._rows.get(fde_address)
        if rows is None:
            rows = self._rows[fde_address] = self._decode_fde(fde_address)
        if not rows or not rows[0] <= pc < rows[3]:
            return None
        _start, starts, table, _end = rows
        return self._rule(table[bisect.bisect_right(starts, pc) - 1])

    def fde_starts(self) -> list[int]:
        """The initial location of every FDE, in address order."""
        return list(self._index.starts)

    def fde_range(self, pc: int) -> tuple[int, int] | None:
        """[initial location, initial location + address range) of the FDE that covers `pc`,
        or None. Without symbols this is where the function holding `pc` starts and ends: the
        compiler emits one FDE per function (gcc's .cfi_startproc/.cfi_endproc), which is how
        gdb and perf name stripped code and how binary rewriters find function bounds."""
        i = bisect.bisect_right(self._index.starts, pc) - 1
        if i < 0:
            return None
        fde_address = self._index.table[i][1]
        if fde_address not in self._index.ranges:
            self._index.ranges[fde_address] = self._fde_header_range(fde_address)
        found = self._index.ranges[fde_address]
        return found if found is not None and found[0] <= pc < found[1] else None

    def _fde_header_range(self, fde_address: int) -> tuple[int, int] | None:
        rows = self._rows.get(fde_address)
        if rows is not None:
            return rows[0], rows[3]
        try:
            header = self._index.headers().header_at(fde_address - self._index.eh_frame)
        except FdeHeaderError:
            return None                         # a damaged entry gives no bounds
        return header.start, header.end

    def _decode_fde(self, fde_address: int):
        entry = self._call_frame_info()._parse_entry_at(fde_address - self._index.eh_frame)
        if not isinstance(entry, FDE):
            return None
        start = entry.header.initial_location
        end = start + entry.header.address_range
        # DW_CFA_GNU_args_size (the size of the arguments pushed at a call, for a landing pad)
        # changes no rule, and pyelftools stops at it; gcc emits it on i386 in functions with
        # cleanups (Debian's i386 libc, its fclose; bash-static's lock-taking functions).
        entry.instructions = [i for i in entry.instructions if i.opcode != DW_CFA_GNU_args_size]
        try:
            table = entry.get_decoded().table
        except (ValueError, KeyError, IndexError, TypeError, AssertionError) as exc:
            # pyelftools stumbles on some instruction sequences (seen: a ValueError from an
            # enum's __format__ in Debian's i386 libc): this FDE cannot be read, others can
            raise CfiUnsupported(f"FDE at {fde_address:#x} cannot be decoded: {exc}") from None
        return (start, [row["pc"] for row in table], table, end) if table else None

    def _rule(self, row: dict) -> FrameRule:
        names = self._names
        cfa = row["cfa"]
        if cfa.expr is not None:
            cfa_rule = ("expression", self._ops(cfa.expr))
        elif cfa.reg is None or cfa.reg >= len(names):
            raise CfiUnsupported(f"CFA in DWARF register {cfa.reg}")
        else:
            cfa_rule = (names[cfa.reg], cfa.offset)
        saved = {}
        for column, rule in row.items():
            if column in ("pc", "cfa") or not isinstance(rule, RegisterRule):
                continue
            if column >= len(names):
                continue                        # vector and x87 registers: not needed here
            saved[names[column]] = _register_rule(rule, names, self._ops)
        return FrameRule(cfa_rule, saved, names[-1])

    def _ops(self, expression) -> tuple:
        """A DWARF expression as (operation name, arguments) pairs, register operands named."""
        parser = self._parser
        if parser is None:
            structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=self.image.bits // 8)
            parser = self._parser = DWARFExprParser(structs)
        return tuple((op.op_name, tuple(op.args)) for op in parser.parse_expr(list(expression)))

    _parser = None


def _read_segments(segments, address: int, size: int) -> bytes:
    """`size` bytes at `address` from the file-backed part of the segments."""
    for seg in segments:
        if seg.vaddr <= address and address + size <= seg.vaddr + seg.filesz:
            start = address - seg.vaddr
            return bytes(seg.data[start:start + size])
    raise ValueError(f"{address:#x}+{size} is not in the object's file-backed segments")


def _register_rule(rule: RegisterRule, names, ops) -> tuple:
    kind = rule.type
    if kind == RegisterRule.OFFSET:
        return ("at", rule.arg)
    if kind == RegisterRule.VAL_OFFSET:
        return ("value", rule.arg)
    if kind == RegisterRule.SAME_VALUE:
        return ("same",)
    if kind == RegisterRule.UNDEFINED:
        return ("undefined",)
    if kind == RegisterRule.REGISTER:
        return ("register", names[rule.arg]) if rule.arg < len(names) else ("unsupported", kind)
    if kind == RegisterRule.EXPRESSION:
        return ("at-expression", ops(rule.arg))
    if kind == RegisterRule.VAL_EXPRESSION:
        return ("expression", ops(rule.arg))
    return ("unsupported", kind)              # "architectural": nothing the psABIs use
