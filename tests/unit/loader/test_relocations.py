"""loader/relocations.py: the GOT slots ld.so fills, read back from PT_DYNAMIC's tables in
the loaded segments (x86-64 RELA, i386 REL), checked on the host's own binaries and on the
committed dynamic samples of both arches."""
from pathlib import Path

import pytest

from loader.elf import load_elf
from loader.relocations import dynamic_table, got_slots

ROOT = Path(__file__).resolve().parents[3]
DYN = ROOT / "samples" / "dyn" / "bin"
STATIC = ROOT / "samples" / "bin"
HOST_LIBC = Path("/lib/x86_64-linux-gnu/libc.so.6")


def _load(path: Path, **kw):
    return load_elf(path.read_bytes(), str(path), **kw)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_static_program_has_no_dynamic_table(arch):
    image = _load(STATIC / arch / "fib")
    assert image.dynamic == 0 and dynamic_table(image) == {} and got_slots(image) == []


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("variant", ["", "-pie"])
def test_the_plt_slot_of_strlen_is_lazy_at_its_own_plt_stub(arch, variant):
    # strlen_calls calls strlen through the PLT: one JUMP_SLOT names it, and until ld.so binds
    # it the slot holds the address of its PLT stub (relocated), inside the program's text.
    image = _load(DYN / arch / f"strlen_calls{variant}")
    slots = [s for s in got_slots(image) if s.symbol == "strlen"]
    assert [s.kind for s in slots] == ["jump_slot"]
    text = [seg for seg in image.segments if seg.perms & 4]
    assert any(seg.vaddr <= slots[0].lazy < seg.vaddr + seg.memsz for seg in text)
    data = [seg for seg in image.segments if seg.perms & 2]
    assert any(seg.vaddr <= slots[0].address < seg.vaddr + seg.memsz for seg in data)


def test_glibcs_irelative_slots_name_its_ifunc_resolvers():
    # the host's glibc (the Debian hosts this runs on all have it; a host without fails here)
    image = _load(HOST_LIBC, shared_object=True)
    irelative = [s for s in got_slots(image) if s.kind == "irelative"]
    assert len(irelative) > 10
    named = [image.symbols.function_at(s.resolver) for s in irelative]
    kinds = {sym.kind for sym in named if sym is not None and sym.addr in {s.resolver for s in irelative}}
    assert kinds == {"ifunc"}


def test_a_truncated_dynamic_table_gives_what_could_be_read():
    image = _load(DYN / "x86_64" / "strlen_calls")
    beyond = max(seg.vaddr + seg.filesz for seg in image.segments)
    broken = image._replace(dynamic=beyond - 8)       # the table runs off the loaded bytes
    assert got_slots(broken) == []
