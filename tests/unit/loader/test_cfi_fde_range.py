"""loader/cfi.py fde_range: the [start, end) of the FDE that covers an address — a function's
bounds in code without symbols (how gdb and perf name stripped code). Checked against the
symbol tables of the samples and of Debian's libc, where both exist."""
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.cfi import CallFrameTable
from loader.elf import load_elf, load_elf_file
from loader.image import PERM_X
from loader.symbols import SymbolTable

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
ROOTFS = ROOT / "tests" / "e2e" / ".cache" / "rootfs"
CALLCHAIN = ("leaf", "inner", "middle", "outer", "spiral", "main")
LIBC = {"amd64": "usr/lib/x86_64-linux-gnu/libc.so.6", "i386": "usr/lib/i386-linux-gnu/libc.so.6"}


def _callchain(arch):
    image = load_elf_file(str(SAMPLES / arch / "callchain"))
    return image, CallFrameTable(image)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_each_function_of_the_sample_is_one_fde(arch):
    image, table = _callchain(arch)
    for name in CALLCHAIN:
        f = image.symbols.lookup(name)
        bounds = (f.addr, f.addr + f.size)
        assert [table.fde_range(a) for a in (f.addr, f.addr + f.size // 2, f.addr + f.size - 1)] == [bounds] * 3
        assert table.fde_range(f.addr + f.size) != bounds        # half open: the next one's, or none
    exact = [f for f in image.symbols.functions()
             if f.size and table.fde_range(f.addr) == (f.addr, f.addr + f.size)]
    assert len(exact) == len([f for f in image.symbols.functions() if f.size]) == 75
    starts = table.fde_starts()
    assert starts == sorted(starts) and len(starts) == len(set(starts)) > len(CALLCHAIN)
    assert all(table.fde_range(a)[0] == a for a in starts)


def test_no_fde_no_range():
    image, table = _callchain("x86_64")
    assert table.fde_range(0x1000) is None and table.fde_range(1 << 40) is None
    without = CallFrameTable(image._replace(phdr_addr=0, symbol_reader=_NoSections()))
    assert not without and without.fde_range(image.symbols.lookup("leaf").addr) is None


class _NoSections:
    """Neither .eh_frame_hdr (phdr_addr=0) nor section headers: nothing finds the FDEs."""
    sections: dict = {}

    def __call__(self):
        return SymbolTable(())


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=200)
@given(data=st.data())
def test_ranges_and_rules_agree_on_what_an_fde_covers(arch, data):
    """Anywhere in the text, fde_range and rule_at see the same FDE: a range holds the
    address exactly when a rule is in force there, and the rule at the range's start is the
    FDE's first row."""
    image, table = _callchain(arch)
    text = next(s for s in image.segments if s.perms & PERM_X)
    pc = data.draw(st.integers(text.vaddr - 0x100, text.vaddr + text.memsz + 0x100))
    found = table.fde_range(pc)
    assert (found is not None) == (table.rule_at(pc) is not None)
    if found is not None:
        start, end = found
        assert start <= pc < end and table.fde_range(start) == found == table.fde_range(end - 1)


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_debian_libc_functions_are_their_fdes(deb_arch):
    """Compiled functions have one FDE each; the assembly functions that split themselves in
    several (clone's child part, setcontext's) start at their first FDE's start."""
    path = ROOTFS / deb_arch / "root" / LIBC[deb_arch]
    if not path.exists():
        pytest.fail(f"the Debian rootfs is not fetched ({path}): run tests/e2e/fetch_debian_bins.py")
    image = load_elf(path.read_bytes(), "libc.so.6", pie_base=0x10000, shared_object=True)
    table = CallFrameTable(image)
    sized = [f for f in image.symbols.functions() if f.size]
    found = {f: table.fde_range(f.addr) for f in sized}
    exact = [f for f, r in found.items() if r == (f.addr, f.addr + f.size)]
    assert len(exact) > 0.99 * len(sized) > 2000
    for f, r in found.items():
        assert r is None or (r[0] == f.addr and r[1] <= f.addr + f.size), (f, r)
