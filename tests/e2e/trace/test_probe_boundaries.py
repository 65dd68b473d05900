"""Probe addresses where no instruction starts (issue 26), through the CLI, both arches: refused
in one line with the nearest instruction starts and the bad-probe status (2), before anything is
patched — in the program, a PIE, a library and a library dlopen maps later; an address with no
code is refused with that reason; a valid address keeps its hits.

Before: an int3 inside `_start`'s first instruction (a symbol of size 0) was placed and the
program died or ran a corrupted instruction; `_start+1` was refused as "past the end of _start
(0 bytes)"; 0x12345 in i386 fib (the text segment's first page, before its PT_LOAD) was
accepted and got 0 hits."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from instrumenter.insn.decode import decode
from loader.elf import load_elf_file
from tests.e2e.debian_bins import ARCHES
from tests.e2e.forkserver import run_trapline
from tests.e2e.rootfs_variants import EXTRA_DIR, SAMPLE_ARCH
from tests.e2e.static_c import build_static
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[3] / "samples"
USAGE = 2


def trace(*argv: str) -> subprocess.CompletedProcess:
    return run_trapline(["trace", "-c", *argv], text=True, timeout=300)


def hits(done: subprocess.CompletedProcess) -> dict[str, int]:
    """Records per probe of a `--format jsonl` run."""
    assert done.returncode in (0, 55), done.stderr
    counts: dict[str, int] = {}
    for line in done.stdout.splitlines():
        if line.startswith('{"ts"'):
            probe = json.loads(line)["probe"]
            counts[probe] = counts.get(probe, 0) + 1
    return counts


def refusal(done: subprocess.CompletedProcess) -> str:
    """The one line a refused probe gets (and nothing ran: no guest output)."""
    assert done.returncode == USAGE and done.stdout == "", done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def symbol_at(path: Path, symbol: str) -> tuple[int, str, int, bytes]:
    """(address, arch, section address, section bytes) of `symbol` in the ELF file's own
    addresses (pyelftools: a shared library, which the program loader does not take, too)."""
    from elftools.elf.elffile import ELFFile
    with open(path, "rb") as f:
        elf = ELFFile(f)
        address = next(s["st_value"] for table in (".symtab", ".dynsym")
                       if elf.get_section_by_name(table) is not None
                       for s in elf.get_section_by_name(table).iter_symbols()
                       if s.name.split("@")[0] == symbol and s["st_value"])
        section = next(sec for sec in elf.iter_sections()
                       if sec["sh_addr"] <= address < sec["sh_addr"] + sec["sh_size"])
        return address, "x86_64" if elf.elfclass == 64 else "i386", section["sh_addr"], section.data()


def inside_an_instruction(path: Path, symbol: str) -> tuple[int, int, int]:
    """(start, a byte inside, next start) of the first instruction of `symbol` longer than one
    byte, in the file's own addresses."""
    address, arch, base, code = symbol_at(path, symbol)
    while True:
        length = decode(code[address - base:address - base + 15], address, arch).length
        if length > 1:
            return address, address + 1, address + length
        address += length


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_inside_the_first_instruction_of_a_symbol_of_size_0(arch):
    fib = SAMPLES / "bin" / arch / "fib"
    start, inside, after = inside_an_instruction(fib, "_start")
    expected = (f"not an instruction boundary (nearest: {start:#x} <_start>, "
                f"{after:#x} <_start+{after - start}>)")
    assert refusal(trace("-p", f"uprobe:fib:{inside:#x}", str(fib), "5")) == \
        f"trapline: uprobe:fib:{inside:#x}: {expected}"
    assert refusal(trace("-p", "uprobe:fib:_start+1", str(fib), "5")) == \
        f"trapline: uprobe:fib:_start+1: {expected}"
    valid = f"uprobe:fib:_start+{after - start}"
    done = trace("--format", "jsonl", "-p", valid, str(fib), "5")
    assert hits(done) == {valid: 1} and "fib(5) = 5" in done.stdout.splitlines()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_inside_an_instruction_of_a_sized_function_and_no_code(arch):
    fib = SAMPLES / "bin" / arch / "fib"
    start, inside, after = inside_an_instruction(fib, "fib")
    offset = start - symbol_at(fib, "fib")[0]
    assert refusal(trace("-p", f"uprobe:fib:{inside:#x}", str(fib), "5")) == \
        (f"trapline: uprobe:fib:{inside:#x}: not an instruction boundary (nearest: {start:#x} "
         f"<fib{f'+{offset}' if offset else ''}>, {after:#x} <fib+{offset + after - start}>)")
    assert refusal(trace("-p", "uprobe:fib:0x12345", str(fib), "5")) == \
        "trapline: uprobe:fib:0x12345: no code at 0x12345 (outside every executable segment of fib)"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_valid_address_is_still_accepted_with_the_same_hits(arch):
    """fib+1 (after push %ebp/%rbp) runs once per call, as fib's entry does."""
    fib = SAMPLES / "bin" / arch / "fib"
    second = symbol_at(fib, "fib")[0] + 1
    done = trace("--format", "jsonl", "-p", "uprobe:fib:fib", "-p", f"uprobe:fib:{second:#x}", str(fib), "10")
    assert hits(done) == {"uprobe:fib:fib": 177, f"uprobe:fib:{second:#x}": 177}


def test_the_issue_example_gcc_init_of_size_0(tmp_path_factory):
    """gcc's crti.o `_init` (size 0, in .init) of a host-gcc static program: the issue's case."""
    program = build_static(tmp_path_factory, "fibgcc", "int fib(int n) { return n < 2 ? n : "
                           "fib(n - 1) + fib(n - 2); }\nint main(void) { return fib(10); }\n")
    image = load_elf_file(str(program))
    assert image.symbols.lookup("_init").size == 0
    start, inside, after = inside_an_instruction(program, "_init")
    expected = (f"not an instruction boundary (nearest: {start:#x} <_init>, "
                f"{after:#x} <_init+{after - start}>)")
    for spec in (f"uprobe:fibgcc:{start + 3:#x}" if after - start > 3 else f"uprobe:fibgcc:{inside:#x}",
                 "uprobe:fibgcc:_init+1"):
        assert refusal(trace("-p", spec, str(program))) == f"trapline: {spec}: {expected}"
    valid = f"uprobe:fibgcc:_init+{after - start}"
    assert hits(trace("--format", "jsonl", "-p", valid, str(program))) == {valid: 1}


def test_inside_an_instruction_of_a_pie_is_named_in_the_file_s_addresses():
    pie = SAMPLES / "dyn" / "bin" / "x86_64" / "hello-pie"
    start, inside, after = inside_an_instruction(pie, "main")
    line = refusal(trace("-p", f"uprobe:hello-pie:{inside:#x}", str(pie)))
    assert line.startswith(f"trapline: uprobe:hello-pie:{inside:#x}: not an instruction boundary "
                           f"(nearest: {start:#x} <main")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("library, symbol, program", [("libc.so.6", "malloc", "malloc_count"),
                                                      ("libm.so.6", "cos", "dlopen_cos")])
@alternates("arch")
def test_inside_an_instruction_of_a_library_loaded_at_start_or_by_dlopen(
        arch, library, symbol, program, dyn_samples_rootfs):
    """libm is mapped by dlopen_cos's dlopen, after the program started: refused then, the
    run stopped with the bad-probe status before cos runs."""
    root = dyn_samples_rootfs(arch)
    path = next(p for p in sorted(root.glob(f"usr/lib/*/{library}")) + sorted(root.glob(f"lib/*/{library}"))
                if p.exists())
    start, inside, after = inside_an_instruction(path.resolve(), symbol)
    offset = start - symbol_at(path.resolve(), symbol)[0]
    done = trace("--rootfs", str(root), "--clear-env", "-p", f"uprobe:{library}:{symbol}+{inside - start + offset}",
                 "--", f"/{EXTRA_DIR}/{program}", "3")
    assert done.returncode == USAGE and "cos(0.5)" not in done.stdout, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last == (f"trapline: uprobe:{library}:{symbol}+{inside - start + offset}: not an "
                    f"instruction boundary (nearest: {start:#x} <{symbol}"
                    f"{f'+{offset}' if offset else ''}>, {after:#x} <{symbol}+{offset + after - start}>)"), \
        (SAMPLE_ARCH[arch], done.stderr)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_probe_on_a_library_never_loaded_is_said_never_to_have_attached(arch):
    """It waited for libnotthere.so to the end: 0 hits that looked like a function never
    called. The run is the program's (its status, its output); the probe on fib still counts."""
    fib = SAMPLES / "bin" / arch / "fib"
    done = trace("--format", "jsonl", "-p", "uprobe:libnotthere.so:foo", "-p", "uprobe:fib:fib", str(fib), "10")
    assert hits(done) == {"uprobe:fib:fib": 177} and "fib(10) = 55" in done.stdout.splitlines()
    assert done.stderr.splitlines()[0] == ("trapline: uprobe:libnotthere.so:foo: never attached: "
                                           "no object named libnotthere.so was mapped")
    assert "never attached" not in done.stderr.split("\n", 1)[1]
