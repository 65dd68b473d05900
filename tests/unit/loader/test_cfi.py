"""loader/cfi.py: the CFI rows of .eh_frame, found through .eh_frame_hdr, on the samples (clang,
musl) and Debian's glibc objects, relocated where they are mapped."""
from pathlib import Path

import pytest
from elftools.dwarf.callframe import FDE

from loader.cfi import CallFrameTable, CfiUnsupported
from loader.elf import load_elf, load_elf_file
from loader.symbols import SymbolTable

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
ROOTFS = ROOT / "tests" / "e2e" / ".cache" / "rootfs"


@pytest.mark.parametrize("arch,bits", [("i386", 32), ("x86_64", 64)])
def test_fib_rows_follow_its_prologue(arch, bits):
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    table = CallFrameTable(image)
    assert table and table.problem is None
    fib = image.symbols.lookup("fib")
    sp, bp, ip, word = ("esp", "ebp", "eip", 4) if bits == 32 else ("rsp", "rbp", "rip", 8)
    entry = table.rule_at(fib.addr)
    assert entry.cfa == (sp, word) and entry.saved == {ip: ("at", -word)}   # the call's return address
    pushed = table.rule_at(fib.addr + 1)                                      # after push %ebp
    assert pushed.cfa == (sp, 2 * word) and pushed.saved[bp] == ("at", -2 * word)
    body = table.rule_at(fib.addr + fib.size // 2)
    assert body.cfa == (bp, 2 * word)                                          # mov %esp,%ebp done
    assert table.rule_at(fib.addr + fib.size - 1).cfa == (sp, word)          # at the ret


def test_an_address_without_an_fde_has_no_rule():
    image = load_elf_file(str(SAMPLES / "x86_64" / "fib"))
    table = CallFrameTable(image)
    assert table.rule_at(0x1000) is None
    assert table.rule_at(image.segments[-1].vaddr + image.segments[-1].memsz + 0x10000) is None


def test_a_relocated_library_gives_relocated_rows():
    libc = ROOTFS / "amd64" / "root" / "usr" / "lib" / "x86_64-linux-gnu" / "libc.so.6"
    if not libc.exists():
        pytest.fail(f"the Debian rootfs is not fetched ({libc}): run tests/e2e/fetch_debian_bins.py")
    data = libc.read_bytes()
    low = CallFrameTable(load_elf(data, "libc.so.6", pie_base=0x10000, shared_object=True))
    high = CallFrameTable(load_elf(data, "libc.so.6", pie_base=0x7FFFF7000000, shared_object=True))
    image = load_elf(data, "libc.so.6", pie_base=0x10000, shared_object=True)
    qsort = image.symbols.lookup("qsort")
    rule = low.rule_at(qsort.addr + 4)
    assert rule is not None and rule == high.rule_at(qsort.addr - 0x10000 + 0x7FFFF7000000 + 4)
    assert low.rule_at(0x10000 + len(data) * 4) is None


def test_the_plt_cfa_is_a_dwarf_expression():
    sort = ROOTFS / "amd64" / "root" / "usr" / "bin" / "sort"
    if not sort.exists():
        pytest.fail(f"the Debian rootfs is not fetched ({sort}): run tests/e2e/fetch_debian_bins.py")
    image = load_elf_file(str(sort), pie_base=0x555555554000)
    table = CallFrameTable(image)
    plt = next(r for r in (table.rule_at(a) for a in range(0x555555557000, 0x555555558000, 16)) if r
               and r.cfa[0] == "expression")
    ops = [name for name, _ in plt.cfa[1]]
    assert ops[:2] == ["DW_OP_breg7", "DW_OP_breg16"] and "DW_OP_and" in ops


def _debian_i386_libc():
    libc = ROOTFS / "i386" / "root" / "usr" / "lib" / "i386-linux-gnu" / "libc.so.6"
    if not libc.exists():
        pytest.fail(f"the Debian rootfs is not fetched ({libc}): run tests/e2e/fetch_debian_bins.py")
    return load_elf(libc.read_bytes(), "libc.so.6", pie_base=0x10000, shared_object=True)


def test_gnu_args_size_is_read_past():
    """Debian's i386 libc: the FDEs of functions with cleanups (fclose) carry
    DW_CFA_GNU_args_size, which pyelftools' table decoder stops at (a ValueError from an enum
    formatted with #x); it changes no rule, and every FDE of the library decodes."""
    image = _debian_i386_libc()
    table = CallFrameTable(image)
    fclose = image.symbols.lookup("fclose")
    rule = table.rule_at(fclose.addr + 232)
    assert rule is not None and rule.saved["eip"] == ("at", -4)
    for start in table.fde_starts():
        table.rule_at(start)                    # no CfiUnsupported


def test_an_fde_pyelftools_cannot_decode_is_unsupported_not_a_crash(monkeypatch):
    image = _debian_i386_libc()
    table = CallFrameTable(image)

    def fails(self):
        raise ValueError("Unknown format code 'x' for object of type 'str'")

    monkeypatch.setattr(FDE, "get_decoded", fails)
    with pytest.raises(CfiUnsupported, match="cannot be decoded"):
        table.rule_at(image.symbols.lookup("fclose").addr + 232)


def test_without_eh_frame_hdr_the_fdes_are_found_from_the_section_headers():
    """As gdb and perf read a stripped gcc -static program (no .eh_frame_hdr, no
    __EH_FRAME_BEGIN__ symbol): the same rows as through the search table."""
    image = load_elf_file(str(SAMPLES / "x86_64" / "fib"))
    assert image.symbols.lookup("__EH_FRAME_BEGIN__") is None
    table, headerless = CallFrameTable(image), CallFrameTable(image._replace(phdr_addr=0))
    assert headerless and headerless.fde_starts() == table.fde_starts()
    fib = image.symbols.lookup("fib")
    for pc in range(fib.addr, fib.addr + fib.size):
        assert headerless.rule_at(pc) == table.rule_at(pc)


class _NoSections:
    sections: dict = {}

    def __call__(self):
        return SymbolTable(())


def test_an_object_without_eh_frame_hdr_or_section_headers_says_so():
    image = load_elf_file(str(SAMPLES / "x86_64" / "fib"))
    table = CallFrameTable(image._replace(phdr_addr=0, symbol_reader=_NoSections()))
    assert not table and table.problem == "no PT_GNU_EH_FRAME" and table.rule_at(image.entry) is None
