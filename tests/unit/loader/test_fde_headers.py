"""loader/fde_headers.py and CallFrameTable's starts and ranges, against pyelftools' full parse of
`.eh_frame` (every entry, instructions included: what cfi.py did before): identical FDEs on the
samples and on Debian's objects of both arches, with and without `.eh_frame_hdr`."""
from __future__ import annotations

import functools
import io
from pathlib import Path

import pytest
from elftools.dwarf.callframe import FDE
from elftools.elf.elffile import ELFFile

from loader.cfi import CallFrameTable
from loader.elf import load_elf
from loader.fde_headers import FdeHeaderReader
from tests.quick_profile import THOROUGH

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
CACHE = ROOT / "tests" / "e2e" / ".cache"
LIBDIR = {"amd64": "x86_64-linux-gnu", "i386": "i386-linux-gnu"}
LD_SO = {"amd64": "ld-linux-x86-64.so.2", "i386": "ld-linux.so.2"}
SAMPLE_NAMES = ("fib", "callchain_nofp", "threads", "hello", "vfork_nested")


def debian_objects():
    """(id, path) of Debian's objects: bash-static and busybox (static, no .eh_frame_hdr),
    libc and ld.so (shared, with it) and sort (a PIE)."""
    for arch in ("amd64", "i386"):
        lib = CACHE / "rootfs" / arch / "root" / "usr" / "lib" / LIBDIR[arch]
        yield f"{arch}-bash-static", CACHE / "debian" / arch / "root" / "bin" / "bash-static"
        yield f"{arch}-busybox", CACHE / "debian" / arch / "root" / "bin" / "busybox"
        yield f"{arch}-libc", lib / "libc.so.6"
        yield f"{arch}-ld.so", lib / LD_SO[arch]
        yield f"{arch}-sort", CACHE / "rootfs" / arch / "root" / "usr" / "bin" / "sort"


OBJECTS = [*((f"{arch}-{name}", SAMPLES / arch / name)
             for arch in ("i386", "x86_64") for name in SAMPLE_NAMES), *debian_objects()]
# pyelftools' full parse of these is most of the file's time: the quick profile keeps bash-static
# (the walk without .eh_frame_hdr), ld.so and sort (through it) of Debian's objects
THOROUGH_OBJECTS = ("-libc", "-busybox")
PARAMS = [pytest.param(path, id=name, marks=THOROUGH if name.endswith(THOROUGH_OBJECTS) else ())
          for name, path in OBJECTS]


def pyelftools_fdes(data: bytes, bias: int) -> list[tuple[int, int, int]]:
    """(start, end, FDE address) of every FDE in .eh_frame, in file order, by pyelftools."""
    elf = ELFFile(io.BytesIO(data))
    section = elf.get_section_by_name(".eh_frame")
    entries = elf.get_dwarf_info().EH_CFI_entries()
    return [(e.header.initial_location + bias, e.header.initial_location + e.header.address_range + bias,
             section["sh_addr"] + e.offset + bias) for e in entries if isinstance(e, FDE)]


def _load(path: Path):
    if not path.exists():
        pytest.fail(f"{path} is missing: build the samples or run tests/e2e/fetch_debian_bins.py")
    data = path.read_bytes()
    shared = path.name.startswith(("ld-", "lib"))
    return data, load_elf(data, path.name, pie_base=0x10000 if shared else None, shared_object=shared)


@functools.cache
def _image_and_fdes(path: Path):
    """The loaded object and pyelftools' FDEs of it (parsed once: seconds for libc)."""
    data, image = _load(path)
    return image, pyelftools_fdes(data, image.load_bias)


@pytest.mark.parametrize("path", PARAMS)
def test_the_headers_are_pyelftools_fdes(path):
    image, expected = _image_and_fdes(path)
    assert len(expected) > 3, "the object has FDEs to compare"
    section_start, size = image.sections[".eh_frame"]
    segment = next(s for s in image.segments if s.vaddr <= section_start < s.vaddr + s.filesz)
    reader = FdeHeaderReader(bytes(segment.data), segment.vaddr, image.bits)
    walked = reader.walk(section_start - segment.vaddr, section_start - segment.vaddr + size)
    assert [tuple(h) for h in walked] == expected


@pytest.mark.parametrize("path", PARAMS)
@pytest.mark.parametrize("header", ["eh_frame_hdr", "headerless"])
def test_call_frame_table_starts_and_ranges_are_pyelftools(path, header):
    """fde_starts and fde_range, through .eh_frame_hdr's table where the object has one and by
    walking .eh_frame where it has none (bash-static, busybox) or is told to (phdr_addr=0)."""
    image, expected = _image_and_fdes(path)
    table = CallFrameTable(image if header == "eh_frame_hdr" else image._replace(phdr_addr=0))
    assert table.problem is None
    assert table.fde_starts() == sorted(start for start, _end, _at in expected)
    # the covering FDE of each start is the one pyelftools read there (one FDE per start:
    # a zero-length FDE shares its start with the next and is never the covering one)
    by_start = {start: (start, end) for start, end, _at in sorted(expected, key=lambda f: (f[0], f[2]))
                if end > start}
    assert by_start, "some FDE covers code"
    assert {start: table.fde_range(start) for start in by_start} == by_start


@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_starts_and_ranges_decode_no_instruction(arch, monkeypatch):
    """What a probe check asks (starts, ranges) reads FDE headers only: bash-static's 4 000 FDEs
    were parsed in full by pyelftools, instructions included, to learn their starts (most of a
    trace -f of bash). Rows still decode, FDE by FDE, when a frame asks."""
    data, image = _load(CACHE / "debian" / arch / "root" / "bin" / "bash-static")
    from elftools.dwarf.callframe import CallFrameInfo
    parse = CallFrameInfo._parse_instructions
    decoded = []

    def counted(self, *args):
        decoded.append(args)
        return parse(self, *args)
    monkeypatch.setattr(CallFrameInfo, "_parse_instructions", counted)
    table = CallFrameTable(image)
    starts = table.fde_starts()
    assert len(starts) > 4_000 and all(table.fde_range(s) is not None for s in starts[::97])
    assert decoded == [], "no call-frame instruction is parsed for starts and ranges"
    assert table.rule_at(starts[1]) is not None and decoded, "rows decode on demand"
