"""loader/fde_headers.py against pyelftools' parse of the same bytes (hypothesis): for any
.eh_frame of CIEs with a 'z' augmentation ('R' with any fixed or LEB128 format, absolute or
pc-relative; 'P' and 'L' before it; version 1 or 3) and FDEs of any of them, with instructions
and augmentation data, the reader finds every FDE with pyelftools' start and range (the start
taken modulo the address width, as a mapped address is)."""
from __future__ import annotations

import io
import struct

from hypothesis import given, settings, strategies as st
from elftools.dwarf.callframe import FDE, CallFrameInfo
from elftools.dwarf.structs import DWARFStructs

from loader.fde_headers import FdeHeaderReader
from kernel_model.vdso.eh_frame import sleb, uleb     # DWARF LEB128 (the vDSO's CFI)

# DW_EH_PE format -> (struct format or LEB128 kind, signed)
FORMATS = {0x00: None, 0x01: "uleb", 0x02: "<H", 0x03: "<I", 0x04: "<Q",
           0x09: "sleb", 0x0A: "<h", 0x0B: "<i", 0x0C: "<q"}
BASE = 0x5000
REACHED = {"pcrel": False, "leb": False, "personality": False, "many": False}


def encode(form: int, value: int, bits: int) -> bytes:
    fmt = FORMATS[form] or ("<I" if bits == 32 else "<Q")
    if fmt == "uleb":
        return uleb(value)
    if fmt == "sleb":
        return sleb(value)
    size = struct.calcsize(fmt)
    if fmt.islower():                               # signed: wrap into its range
        value = (value + (1 << (8 * size - 1))) % (1 << 8 * size) - (1 << (8 * size - 1))
    else:
        value %= 1 << (8 * size)
    return struct.pack(fmt, value)


def value_range(form: int, bits: int) -> tuple[int, int]:
    fmt = FORMATS[form] or ("<I" if bits == 32 else "<Q")
    if fmt in ("uleb", "sleb"):
        return (0, (1 << bits) - 1) if fmt == "uleb" else (-(1 << 20), 1 << 20)
    size = 8 * struct.calcsize(fmt)
    return (-(1 << (size - 1)), (1 << (size - 1)) - 1) if fmt.islower() else (0, (1 << size) - 1)


@st.composite
def eh_frames(draw):
    bits = draw(st.sampled_from([32, 64]))
    cies = []
    for _ in range(draw(st.integers(1, 3))):
        form = draw(st.sampled_from(sorted(FORMATS)))
        cies.append({"encoding": form | draw(st.sampled_from([0x00, 0x10])),
                     "version": draw(st.sampled_from([1, 3])),
                     "personality": draw(st.booleans()), "lsda": draw(st.booleans())})
    fdes = [(draw(st.integers(0, len(cies) - 1)), draw(st.data()), draw(st.binary(max_size=6)))
            for _ in range(draw(st.integers(1, 6)))]
    return bits, cies, [(c, data.draw(st.integers(*value_range(cies[c]["encoding"] & 0x0F, bits))),
                         data.draw(st.integers(*value_range(cies[c]["encoding"] & 0x0F, bits)).map(abs)),
                         insns) for c, data, insns in fdes]


def entry(body: bytes) -> bytes:
    """A length-prefixed .eh_frame entry, padded to 4 bytes with DW_CFA_nop as gcc pads."""
    body += b"\0" * (-(len(body) + 4) % 4)
    return struct.pack("<I", len(body)) + body


def build(bits: int, cies: list[dict], fdes: list[tuple]) -> bytes:
    out, cie_at = bytearray(), []
    for cie in cies:
        letters = b"z" + (b"P" if cie["personality"] else b"") + (b"L" if cie["lsda"] else b"") + b"R"
        aug = (bytes([0x00]) + encode(0, 0x1234, bits) if cie["personality"] else b"") \
            + (bytes([0x1B]) if cie["lsda"] else b"") + bytes([cie["encoding"]])
        ra = bytes([16]) if cie["version"] == 1 else uleb(16)
        body = struct.pack("<IB", 0, cie["version"]) + letters + b"\0" + uleb(1) + sleb(-8) + ra \
            + uleb(len(aug)) + aug + bytes([0x0C, 7, 8])              # DW_CFA_def_cfa rsp+8
        cie_at.append(len(out))
        out += entry(body)
    for c, start, size, insns in fdes:
        cie = cies[c]
        here = len(out)
        form = cie["encoding"] & 0x0F
        aug = encode(0x0B, 0, bits) if cie["lsda"] else b""         # an LSDA pointer (sdata4)
        body = struct.pack("<I", here + 4 - cie_at[c]) + encode(form, start, bits) \
            + encode(form, size, bits) + uleb(len(aug)) + aug + bytes([0x40 | 1]) * len(insns)
        out += entry(body)
    return bytes(out + b"\0\0\0\0")


def pyelftools_fdes(data: bytes, bits: int) -> list[tuple[int, int, int]]:
    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=bits // 8)
    cfi = CallFrameInfo(io.BytesIO(data), len(data), BASE, structs, for_eh_frame=True)
    mask = (1 << bits) - 1
    found = []
    for e in cfi.get_entries():
        if isinstance(e, FDE):
            start = e.header.initial_location & mask
            found.append((start, start + e.header.address_range, BASE + e.offset))
    return found


@settings(max_examples=300, deadline=None)
@given(eh_frames())
def test_the_reader_finds_what_pyelftools_parses(frame):
    bits, cies, fdes = frame
    data = build(bits, cies, fdes)
    expected = pyelftools_fdes(data, bits)
    assert len(expected) == len(fdes)
    assert [tuple(h) for h in FdeHeaderReader(data, BASE, bits).walk(0, len(data))] == expected
    REACHED["pcrel"] |= any(cies[c]["encoding"] & 0x10 for c, *_ in fdes)
    REACHED["leb"] |= any(cies[c]["encoding"] & 0x0F in (0x01, 0x09) for c, *_ in fdes)
    REACHED["personality"] |= any(cies[c]["personality"] and cies[c]["lsda"] for c, *_ in fdes)
    REACHED["many"] |= len({c for c, *_ in fdes}) > 1


def test_the_interesting_cases_were_reached():
    """Run after the property (file order): pc-relative and LEB128 starts, CIEs with a
    personality and an LSDA before 'R', FDEs of several CIEs in one .eh_frame."""
    test_the_reader_finds_what_pyelftools_parses()
    assert all(REACHED.values()), REACHED
