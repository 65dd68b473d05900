"""Source lines of the sampled PCs, from the objects' DWARF `.debug_line` (issue 18: "samples
per ... function (and line when DWARF is present)").

As `perf report --sort srcline` does, lines are looked up in the object files after the run:
each sample's PC, in the object mapped over it at that moment (the profile's module-load
records), is turned back into the object's own address (minus its load bias) and found in the
line-number programs (DWARF 5 6.2, read with pyelftools) — the row whose address range holds
it. Objects without `.debug_line` (stripped ones: the samples, Debian's packages) give no line,
and the report then has no line table. The profile keeps what was found (`Profile.lines`), so a
recorded trace carries it and `trapline report` needs no binaries.
"""
from __future__ import annotations

import bisect
import os
from typing import NamedTuple

from elftools.common.exceptions import ELFError
from elftools.common.utils import parse_cstring_from_stream
from elftools.elf.elffile import ELFFile


class SourceLine(NamedTuple):
    file: str       # as the line program names it (with its directory where it gives one)
    line: int

    def __str__(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


DEBUG_LINE = b".debug_line"


def _section_names(elf: ELFFile) -> set[bytes]:
    """The section names, from the section headers alone: pyelftools' own lookup by name
    builds every section first (a shared library's hash tables, for every object), which a
    stripped object's profile paid for nothing (ELF gABI, "Section Header")."""
    header, stream = elf.header, elf.stream
    if not header["e_shnum"] or header["e_shstrndx"] >= header["e_shnum"]:
        return set()

    def section_header(index: int):
        stream.seek(header["e_shoff"] + index * header["e_shentsize"])
        return elf.structs.Elf_Shdr.parse_stream(stream)

    strings = section_header(header["e_shstrndx"])["sh_offset"]
    return {parse_cstring_from_stream(stream, strings + section_header(i)["sh_name"]) or b""
            for i in range(header["e_shnum"])}


class LineTable:
    """Address -> SourceLine for one object file, at its link-time addresses."""

    def __init__(self, path: str):
        self.bias_base = 0             # the lowest PT_LOAD address, page-aligned
        self._starts: list[int] = []   # row addresses, sorted
        self._rows: list[SourceLine | None] = []    # None: the end of a sequence
        try:
            with open(path, "rb") as handle:
                self._read(ELFFile(handle))
        except (OSError, ELFError, ValueError, KeyError, IndexError, AssertionError):
            self._starts, self._rows = [], []        # no lines: nothing is guessed

    def __bool__(self) -> bool:
        return bool(self._starts)

    def _read(self, elf: ELFFile) -> None:
        if DEBUG_LINE not in _section_names(elf):
            return                     # stripped (Debian's objects): nothing more to read
        loads = [seg["p_vaddr"] for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"]
        self.bias_base = min(loads) & ~0xFFF if loads else 0
        if not elf.has_dwarf_info() or elf.get_section_by_name(DEBUG_LINE.decode()) is None:
            return
        dwarf = elf.get_dwarf_info()
        rows: list[tuple[int, SourceLine | None]] = []
        for unit in dwarf.iter_CUs():
            program = dwarf.line_program_for_CU(unit)
            if program is None:
                continue
            names = _file_names(program)
            for entry in program.get_entries():
                state = entry.state
                if state is None:
                    continue
                if state.end_sequence:
                    rows.append((state.address, None))
                else:
                    rows.append((state.address, SourceLine(names.get(state.file, "?"), state.line)))
        # rows at one address: the last one of a sequence wins (it is the line that runs)
        rows.sort(key=lambda row: row[0])
        for address, line in rows:
            if self._starts and self._starts[-1] == address:
                self._rows[-1] = line if line is not None or self._rows[-1] is None else self._rows[-1]
                continue
            self._starts.append(address)
            self._rows.append(line)

    def line_at(self, address: int) -> SourceLine | None:
        i = bisect.bisect_right(self._starts, address) - 1
        return self._rows[i] if i >= 0 else None


def _file_names(program) -> dict[int, str]:
    """File index -> path of a line program (DWARF 5 numbers files from 0, earlier from 1)."""
    header = program.header
    directories = [_text(d) for d in header.get("include_directory", [])]
    base = 0 if header["version"] >= 5 else 1
    names = {}
    for i, entry in enumerate(header.get("file_entry", [])):
        name = _text(entry.name)
        index = entry.dir_index if header["version"] >= 5 else entry.dir_index - 1
        if 0 <= index < len(directories) and not name.startswith("/"):
            name = f"{directories[index]}/{name}"
        names[i + base] = name
    return names


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def resolve_lines(profile, host_path) -> None:
    """Fill `profile.lines` for the samples' PCs: (module, address) -> SourceLine, from the
    object mapped over each PC when the sample was taken; `host_path(guest path)` says where
    the object's file is on the host (the rootfs maps it)."""
    tables: dict[str, LineTable] = {}
    looked_up: set = set()          # (module, address): found or not, as profile.lines keys them
    for sample in profile.in_time_order():
        if not sample.frames:
            continue
        pc = sample.frames[0]
        if (pc.module, pc.address) in looked_up:
            continue
        looked_up.add((pc.module, pc.address))
        load = _module_at(profile.modules, sample.pid, pc.address, sample.ts)
        if load is None:
            continue
        path = host_path(load.path)
        table = tables.get(path)
        if table is None:
            table = tables[path] = LineTable(path)
        if not table:
            continue
        line = table.line_at(pc.address - load.base + table.bias_base)
        if line is not None:
            profile.lines[(pc.module, pc.address)] = line


def _module_at(modules, pid: int, address: int, ts: int):
    """The module last loaded over `address` in `pid` at or before `ts` (dlopen reuse); a
    forked child has its parent's objects, announced under the parent's pid."""
    found = other = None
    for load in modules:
        if load.base <= address < load.end and load.ts <= ts:
            if load.pid == pid:
                found = load
            else:
                other = load
    return found or other
