"""loader/fde_index.py: one FDE table per file at its place, whichever tool asks for it (the
probe check's finder, each profiling session's unwinder, every process of a traced shell)."""
from __future__ import annotations

from pathlib import Path

import pytest

from loader.cfi import CallFrameTable
from loader.elf import load_elf
from loader.fde_headers import FdeHeaderReader
from loader.fde_index import forget_indexes

ROOT = Path(__file__).resolve().parents[3]
DEBIAN = ROOT / "tests" / "e2e" / ".cache" / "debian"


@pytest.fixture
def walks(monkeypatch):
    """The .eh_frame walks made (each reads every FDE header of a headerless object)."""
    forget_indexes()
    made = []
    walk = FdeHeaderReader.walk

    def counted(self, first, stop):
        made.append(self.base)
        return walk(self, first, stop)
    monkeypatch.setattr(FdeHeaderReader, "walk", counted)
    yield made
    forget_indexes()


@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_tables_of_one_file_share_one_walk(arch, walks):
    path = DEBIAN / arch / "root" / "bin" / "bash-static"
    if not path.exists():
        pytest.fail(f"{path} is missing: run tests/e2e/fetch_debian_bins.py")
    data = path.read_bytes()
    image = load_elf(data, "/bin/bash")
    first = CallFrameTable(image)
    again = CallFrameTable(load_elf(data, "/usr/bin/bash"))     # the same bytes, another name
    assert len(walks) == 1, "the second table reads no FDE header again"
    assert again.fde_starts() == first.fde_starts() and len(first.fde_starts()) > 4_000
    starts = first.fde_starts()
    assert again.fde_range(starts[7]) == first.fde_range(starts[7]) is not None
    # rows stay each table's own (decoded FDE by FDE), and agree
    assert again.rule_at(starts[3] + 1) == first.rule_at(starts[3] + 1) is not None


def test_another_place_or_a_headerless_view_is_another_index(walks):
    libc = ROOT / "tests" / "e2e" / ".cache" / "rootfs" / "amd64" / "root" / "usr" / "lib" / \
        "x86_64-linux-gnu" / "libc.so.6"
    if not libc.exists():
        pytest.fail(f"{libc} is missing: run tests/e2e/fetch_debian_bins.py")
    data = libc.read_bytes()
    here = CallFrameTable(load_elf(data, "libc.so.6", pie_base=0x10000, shared_object=True))
    there = CallFrameTable(load_elf(data, "libc.so.6", pie_base=0x7FFFF7000000, shared_object=True))
    assert [s - 0x10000 for s in here.fde_starts()] == [s - 0x7FFFF7000000 for s in there.fde_starts()]
    assert here._index is not there._index and walks == [], "both read .eh_frame_hdr's table"
    image = load_elf((ROOT / "samples" / "bin" / "x86_64" / "fib").read_bytes(), "fib")
    with_header, headerless = CallFrameTable(image), CallFrameTable(image._replace(phdr_addr=0))
    assert walks == [headerless._index.eh_frame], "only the headerless view walks .eh_frame"
    assert with_header._index is not headerless._index
    assert headerless.fde_starts() == with_header.fde_starts()
