"""Who called, in stripped code (issue 18): with no symbol, the function holding an address is
the one its `.eh_frame` FDE bounds, named "module+0xOFF" from its start as stack reports name
stripped code; an FDE that does not begin at a called function's entry (the PLT's) and code no
FDE covers name no function. Checked on the callchain samples with their symbols taken away,
against the symbols they had."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from instrumenter.insn.decode import decode
from instrumenter.profiler.callers import FunctionId
from instrumenter.profiler.callsite import Functions, identify_caller, place_name
from loader.elf import load_elf_file
from loader.symbols import SymbolTable

ROOT = Path(__file__).resolve().parents[4]
SAMPLES = ROOT / "samples" / "bin"
ROOTFS = ROOT / "tests" / "e2e" / ".cache" / "rootfs"
CALLCHAIN = ("leaf", "inner", "middle", "outer", "spiral", "main")


class Door:
    """One object mapped in a process, read from its segments."""

    def __init__(self, image, name: str, base: int):
        end = max(s.vaddr + s.memsz for s in image.segments)
        self.image, self.base = image, base
        self.mapped = SimpleNamespace(base=base, end=end, image=image, name=name)

    def images(self, process):
        return [self.mapped]

    def arch(self, process):
        return SimpleNamespace(name=self.image.arch)

    def cpu(self, process):
        return SimpleNamespace(is_mapped=lambda a, n: self._segment(a, n) is not None)

    def read_memory(self, process, address, size):
        seg = self._segment(address, size)
        return bytes(seg.data[address - seg.vaddr:address - seg.vaddr + size])

    def _segment(self, address, size):
        return next((s for s in self.image.segments
                     if s.vaddr <= address and address + size <= s.vaddr + s.filesz), None)


def _stripped(arch):
    """(door over callchain without its symbols, the symbols it had)."""
    image = load_elf_file(str(SAMPLES / arch / "callchain"))
    named = image.symbols
    stripped = image._replace(symbol_reader=lambda: SymbolTable(()))
    return Door(stripped, "callchain", image.segments[0].vaddr), named


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_stripped_function_is_its_fde_named_by_its_start(arch):
    door, named = _stripped(arch)
    functions = Functions(door)
    for name in CALLCHAIN:
        f = named.lookup(name)
        want = FunctionId("callchain", f"callchain+{f.addr - door.base:#x}", f.addr)
        assert [functions.at(None, a) for a in (f.addr, f.addr + f.size - 1)] == [want, want]
        assert want.name == place_name(door, None, f.addr)        # the stack reports' name


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_caller_of_a_stripped_callee_is_certain(arch):
    door, named = _stripped(arch)
    functions = Functions(door)
    inner, leaf = named.lookup("inner"), named.lookup("leaf")
    code = door.read_memory(None, inner.addr, inner.size)
    at, calls = inner.addr, []
    while at < inner.addr + inner.size:
        insn = decode(code[at - inner.addr:], at, door.image.arch)
        if "call" in insn.groups and insn.branch_target == leaf.addr:
            calls.append(insn.address + insn.length)
        at += insn.length
    assert calls, "inner's call to leaf not found"
    callee = functions.at(None, leaf.addr)
    caller, why = identify_caller(functions, None, calls[0], callee)
    assert (caller, why) == (FunctionId("callchain", f"callchain+{inner.addr - door.base:#x}", inner.addr), None)


def test_code_without_an_fde_is_no_function():
    door, named = _stripped("x86_64")
    functions = Functions(door)
    table = functions.table(door.image)
    text = next(s for s in door.image.segments if s.perms & 4)
    uncovered = next(a for a in range(text.vaddr, text.vaddr + text.filesz) if table.fde_range(a) is None)
    assert functions.at(None, uncovered) is None
    assert functions.at(None, 0x10) is None                        # outside every object


def test_the_plt_fde_is_no_function():
    """The PLT's FDE starts where the CFA is sp + 16 (PLT0 runs after a push and a jmp, never
    called): a function's entry has the return address at [sp]."""
    sort = ROOTFS / "amd64" / "root" / "usr" / "bin" / "sort"
    if not sort.exists():
        pytest.fail(f"the Debian rootfs is not fetched ({sort}): run tests/e2e/fetch_debian_bins.py")
    image = load_elf_file(str(sort), pie_base=0x555555554000)
    door = Door(image._replace(symbol_reader=lambda: SymbolTable(())), "sort", 0x555555554000)
    functions = Functions(door)
    table = functions.table(door.image)
    plt = [a for a in range(0x555555557000, 0x555555558000, 16)
           if table.fde_range(a) is not None and table.rule_at(table.fde_range(a)[0]).cfa == ("rsp", 16)]
    assert plt and all(functions.at(None, a) is None for a in plt)
    # _start is none either: its CFI says the return address is undefined (the outermost
    # frame); the next FDE is a function
    assert table.fde_range(image.entry) is not None and functions.at(None, image.entry) is None
    after = table.fde_range(image.entry)[1]
    start = next(a for a in range(after, after + 0x1000) if table.fde_range(a) is not None)
    assert functions.at(None, start + 1) == FunctionId("sort", f"sort+{start - door.base:#x}", start)
