"""The scratch register kept by the kernel per thread (issue 15; uprobes' riprel_pre_xol /
riprel_post_xol): an x86-64 instruction with a [rip+disp32] operand that uses the stack
pointer — `mov [rip+d], rsp`, `push qword [rip+d]` — probed under the trampoline strategy when
its XOL slot is out of the operand's reach. Before, the copy saved its scratch register on the
stack, which moves rsp, so the trampoline refused these sites and auto fell back to stepping.

The sandbox places XOL pages within reach of both the code and the operand where the layout
allows (the first test); the second simulates a layout that does not — every new area mapped
3 GiB above the code — to drive the two-trap path, whose output must equal the unprobed run.
"""
import subprocess
from pathlib import Path

import pytest

from instrumenter.insn.decode import decode
from instrumenter.strategies import trampoline
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from ..static_c import build_static

PROGRAM = r"""
#include <stdio.h>
long saved_sp, word = 0x1234;
__attribute__((noinline)) long probe_me(void) {
    long v;
    __asm__ volatile("movq %%rsp, saved_sp(%%rip)\n\t"
                     "pushq word(%%rip)\n\t"
                     "popq %0" : "=r"(v) :: "memory");
    return v + (saved_sp != 0);
}
int main(void) {
    long t = 0;
    for (int i = 0; i < 5; i++) t += probe_me();
    printf("%ld %d\n", t, saved_sp != 0);
    return 0;
}
"""
FAR = 3 << 30


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return build_static(tmp_path_factory, "ts", PROGRAM)


def _sites(binary: Path) -> list[int]:
    """The addresses of the mov-from-rsp and the push, the first two instructions."""
    image = load_elf_file(str(binary))
    start = image.symbols.lookup("probe_me").addr
    segment = next(s for s in image.segments if s.vaddr <= start < s.vaddr + s.memsz)
    code = segment.data[start - segment.vaddr:start - segment.vaddr + 32]
    first = decode(code, start, "x86_64")
    second = decode(code[first.length:], first.next_address, "x86_64")
    assert first.rip_relative and second.rip_relative and second.base_mnemonic == "push"
    return [first.address, second.address]


def _run(binary: Path, strategy: str = "trampoline"):
    probes = [Probe(parse_probe_spec(f"uprobe:ts:{address:#x}")) for address in _sites(binary)]
    return probes, Sandbox(probes=probes, strategy=strategy).run([str(binary)])


@pytest.mark.e2e
def test_the_xol_page_is_placed_within_reach_of_the_code_and_its_operands(program):
    native = subprocess.run([str(program)], capture_output=True).stdout
    probes, result = _run(program)
    assert result.exit_code == 0 and result.stdout == native == b"23305 1\n"
    assert [result.hits[p.spec.text] for p in probes] == [5, 5]


class _FarXol(trampoline.XolArea):
    """An XOL area mapped 3 GiB above where it is asked for: a layout with no room nearer."""

    def __init__(self, debug, process, near: int):
        super().__init__(debug, process, near + FAR)
        self.near = near

    def reaches(self, address: int) -> bool:
        return address == self.near          # the sandbox's reach check for the code only


@pytest.mark.e2e
def test_far_operands_of_stack_using_instructions_take_the_two_trap_path(program, monkeypatch):
    native = subprocess.run([str(program)], capture_output=True).stdout
    installed = []
    monkeypatch.setattr(trampoline, "XolArea", _FarXol)
    original_install = trampoline.TaskScratch.install

    def install(self, space, piece):
        installed.append((piece.insn.base_mnemonic, piece.scratch))
        original_install(self, space, piece)
    monkeypatch.setattr(trampoline.TaskScratch, "install", install)
    probes, result = _run(program)
    assert result.exit_code == 0 and result.stdout == native
    assert [result.hits[p.spec.text] for p in probes] == [5, 5]
    assert [mnemonic for mnemonic, _ in installed] == ["mov", "push"]
    assert all(scratch not in ("rsp", None) for _, scratch in installed)
