"""The headers of `.eh_frame`'s FDEs: where each function with CFI starts and ends, read without
decoding a single call-frame instruction.

An FDE (LSB 5.0 10.6.1.2 "Frame Description Entry Format") opens with its length, the distance
back to its CIE, then its initial location and address range, in the pointer encoding its CIE's
'R' augmentation names (LSB 5.0 10.6.1.1 "Common Information Entry Format"; libgcc's
unwind-dw2-fde.c get_cie_encoding reads the same fields to sort a static program's FDEs). What a
probe check or a function-bounds question needs stops there: the instructions after it are only
needed to unwind, and loader/cfi.py decodes those FDE by FDE when a frame asks. One CIE serves
many FDEs, so its encoding is read once per CIE.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

DW_EH_PE_omit = 0xFF
# DW_EH_PE formats (low nibble) with a fixed size; absptr (0) is the object's word, the LEB128
# forms (1 unsigned, 9 signed) are variable.
_FIXED = {0x02: "<H", 0x03: "<I", 0x04: "<Q", 0x0A: "<h", 0x0B: "<i", 0x0C: "<q"}
_ULEB, _SLEB = 0x01, 0x09
DW_EH_PE_pcrel = 0x10


class FdeHeaderError(ValueError):
    """An entry this reader cannot take (an encoding it does not apply, a damaged entry)."""


class FdeHeader(NamedTuple):
    """One FDE: the code it covers, [start, end), and where the FDE itself is."""
    start: int
    end: int
    address: int


class FdeHeaderReader:
    """Reads FDE headers out of `data`, the bytes mapped at `base` (the segment holding the
    .eh_frame entries)."""

    def __init__(self, data: bytes, base: int, bits: int):
        self.data, self.base, self.bits = data, base, bits
        self._mask = (1 << bits) - 1
        self._encodings: dict[int, int] = {}      # CIE offset -> its FDE pointer encoding

    def walk(self, first: int, stop: int) -> list[FdeHeader]:
        """Every FDE from offset `first` to the zero terminator (or `stop`), in file order, as
        libgcc's classify_object_over_fdes walks a registered object. A 64-bit length ends the
        walk: .eh_frame has none (gcc and the linkers write 32-bit entries only)."""
        data, found, at = self.data, [], first
        stop = min(stop, len(data))
        while at + 8 <= stop:
            length, cie_pointer = struct.unpack_from("<II", data, at)
            if length == 0 or length == 0xFFFFFFFF:
                break
            if cie_pointer != 0:                 # a CIE has id 0 in .eh_frame
                found.append(self.header_at(at))
            at += 4 + length
        return found

    def header_at(self, offset: int) -> FdeHeader:
        """The FDE at `offset` in `data`; FdeHeaderError when no FDE can be read there."""
        data = self.data
        try:
            length, cie_pointer = struct.unpack_from("<II", data, offset)
        except struct.error:
            raise FdeHeaderError(f"no entry at {self.base + offset:#x}") from None
        if length in (0, 0xFFFFFFFF) or cie_pointer == 0:
            raise FdeHeaderError(f"no FDE at {self.base + offset:#x}")
        # The CIE pointer counts back from its own field (LSB 5.0: "CIE Pointer").
        encoding = self._encoding(offset + 4 - cie_pointer)
        at = offset + 8
        start, at_range = self._pointer(encoding, at)
        length_of_range, _ = self._pointer(encoding & 0x0F, at_range)   # a size: no application
        start &= self._mask
        return FdeHeader(start, start + length_of_range, self.base + offset)

    # ---- CIEs -----------------------------------------------------------------------------
    def _encoding(self, cie: int) -> int:
        encoding = self._encodings.get(cie)
        if encoding is None:
            encoding = self._encodings[cie] = self._read_cie_encoding(cie)
        return encoding

    def _read_cie_encoding(self, cie: int) -> int:
        """The FDE pointer encoding of the CIE at offset `cie`: its 'R' augmentation data, or the
        object's word (absptr) when it has none (libgcc's get_cie_encoding)."""
        data = self.data
        if cie < 0 or cie + 9 > len(data):
            raise FdeHeaderError(f"CIE at {self.base + cie:#x} is outside .eh_frame")
        length, cie_id = struct.unpack_from("<II", data, cie)
        if cie_id != 0 or length in (0, 0xFFFFFFFF):
            raise FdeHeaderError(f"no CIE at {self.base + cie:#x}")
        version = data[cie + 8]
        end = data.find(b"\0", cie + 9)
        if end < 0:
            raise FdeHeaderError(f"CIE at {self.base + cie:#x} has no augmentation string's end")
        augmentation = data[cie + 9:end]
        if not augmentation:
            return 0x00
        if not augmentation.startswith(b"z"):
            # "eh" (gcc before 3.0) and others put data before the alignment factors whose size
            # only they know: nothing to read the FDEs with (pyelftools refuses them too)
            raise FdeHeaderError(f"CIE augmentation {augmentation!r} is not read")
        at = end + 1
        if version >= 4:
            at += 2                               # address_size, segment_size (DWARF 5 6.4.1)
        _, at = _uleb(data, at)                   # code alignment factor
        _, at = _uleb(data, at)                   # data alignment factor (its sign is not needed)
        at = at + 1 if version == 1 else _uleb(data, at)[1]    # return address register
        _, at = _uleb(data, at)                   # augmentation data length ('z')
        for letter in augmentation[1:]:
            if letter == ord("R"):
                return data[at]
            if letter == ord("L"):
                at += 1
            elif letter == ord("P"):
                _, at = self._pointer(data[at] & 0x0F, at + 1)   # its value is not needed
            elif letter not in b"SBG":
                break                             # unknown: the rest of the data is not readable
        return 0x00

    # ---- pointers (LSB 5.0 10.5 "DWARF Exception Header Encoding") --------------------------
    def _pointer(self, encoding: int, at: int) -> tuple[int, int]:
        """(value, offset after it) of the DW_EH_PE-encoded pointer at offset `at`."""
        form, application = encoding & 0x0F, encoding & 0xF0
        data = self.data
        if form == _ULEB:
            value, after = _uleb(data, at)
        elif form == _SLEB:
            value, after = _sleb(data, at)
        else:
            fmt = _FIXED.get(form) or (None if form else ("<I" if self.bits == 32 else "<Q"))
            if fmt is None:
                raise FdeHeaderError(f"pointer encoding {encoding:#x}")
            try:
                value = struct.unpack_from(fmt, data, at)[0]
            except struct.error:
                raise FdeHeaderError(f"pointer at {self.base + at:#x} is cut short") from None
            after = at + struct.calcsize(fmt)
        if application == DW_EH_PE_pcrel:
            value += self.base + at
        elif application:
            # textrel, datarel, funcrel, aligned, indirect: no x86 .eh_frame FDE uses them
            raise FdeHeaderError(f"pointer encoding {encoding:#x}")
        return value, after


def _uleb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise FdeHeaderError("LEB128 number cut short")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _sleb(data: bytes, at: int) -> tuple[int, int]:
    value, after = _uleb(data, at)
    bits = 7 * (after - at)
    return (value - (1 << bits) if value & (1 << (bits - 1)) else value), after
