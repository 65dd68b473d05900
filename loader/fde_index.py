"""Which FDE covers which code, for one file mapped at one place: read once, shared.

A CallFrameTable is made by each tool that asks (the probe-address check's finder, each profiling
session's unwinder, the walk-up's function bounds), and a traced shell's every process maps the
same bash: the FDE table (from .eh_frame_hdr's search table, or from walking .eh_frame's headers)
and the ranges read so far are the same for all of them, so they are kept per file identity
(the image's segment bytes, which load_elf shares between images of one file, its program
header table's place and its symbol reader, where a headerless walk finds .eh_frame), as load_elf
keeps one image per file's bytes.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from loader.fde_headers import FdeHeaderReader

# Files kept (most recently used last); an entry holds its file's .eh_frame bytes.
INDEX_ENTRIES = 16


class FdeIndex:
    """The FDEs of one mapped object: `table` (initial location, FDE address) in address order,
    `starts` its initial locations, `ranges` FDE address -> [start, end) read so far, the
    .eh_frame entries' span [eh_frame, eh_frame_end), and `problem` (one line) where there is
    no table."""

    def __init__(self, bits: int, read: Callable[[int, int], bytes]):
        self.bits, self._read = bits, read
        self.table: list[tuple[int, int]] = []
        self.starts: list[int] = []
        self.ranges: dict[int, tuple[int, int] | None] = {}
        self.eh_frame = self.eh_frame_end = 0
        self.problem: str | None = None
        self._bytes: bytes | None = None
        self._reader: FdeHeaderReader | None = None

    def frame_bytes(self) -> bytes:
        """The .eh_frame entries' bytes, [eh_frame, eh_frame_end), copied out once."""
        if self._bytes is None:
            self._bytes = self._read(self.eh_frame, self.eh_frame_end - self.eh_frame)
        return self._bytes

    def headers(self) -> FdeHeaderReader:
        if self._reader is None:
            self._reader = FdeHeaderReader(self.frame_bytes(), self.eh_frame, self.bits)
        return self._reader


_INDEXES: OrderedDict[tuple, FdeIndex] = OrderedDict()


def _identity(image) -> tuple | None:
    """What the index depends on (module docstring); None where it cannot be a key (segment
    data in a mutable buffer)."""
    key = (image.segments, image.phdr_addr, image.phent, image.phnum, image.bits, image.symbol_reader)
    try:
        hash(key)        # the segments' bytes hash once: CPython keeps a bytes object's hash
    except TypeError:
        return None
    return key


def index_for(image, build: Callable[[], FdeIndex]) -> FdeIndex:
    """The kept index of `image`'s file at its place, or the one `build` makes (then kept)."""
    key = _identity(image)
    if key is None:
        return build()
    index = _INDEXES.get(key)
    if index is None:
        index = _INDEXES[key] = build()
        if len(_INDEXES) > INDEX_ENTRIES:
            _INDEXES.popitem(last=False)
    else:
        _INDEXES.move_to_end(key)
    return index


def forget_indexes() -> None:
    """Drop every kept index (tables made from them keep theirs)."""
    _INDEXES.clear()
