"""The words an instruction may write (trapline/explain/written.py), from its bytes and the
registers at its step: the word below the stack pointer always (push, call, an emulated push),
and each memory operand it writes at its effective address (RIP-relative from the next
instruction; FS/GS-relative and part-register bases left out); none for what it only reads."""
import pytest
from hypothesis import given
from hypothesis import strategies as st
from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks

from trapline.explain.written import written_words

REGS = {"x86_64": {"rax": 0x1000, "rcx": 2, "rdi": 0x2000, "rsp": 0x7000, "rbp": 0x7100},
        "i386": {"eax": 0x1000, "ecx": 2, "edi": 0x2000, "esp": 0x7000, "ebp": 0x7100}}


def _asm(source: str, arch: str, address: int = 0x400000) -> bytes:
    ks = Ks(KS_ARCH_X86, KS_MODE_32 if arch == "i386" else KS_MODE_64)
    return bytes(ks.asm(source, address)[0])


@pytest.mark.parametrize("arch,source,expected", [
    ("x86_64", "push rbp", [(0x6ff8, 8)]),
    ("x86_64", "mov qword ptr [rdi + 0x70], 5", [(0x6ff8, 8), (0x2070, 8)]),
    ("x86_64", "mov dword ptr [rax + rcx*4 + 8], 1", [(0x6ff8, 8), (0x1010, 4)]),
    ("x86_64", "mov rax, qword ptr [rdi]", [(0x6ff8, 8)]),                   # a read only
    ("x86_64", "mov qword ptr fs:[0x28], rax", [(0x6ff8, 8)]),               # TLS: left out
    ("x86_64", "mov dword ptr [r15d], 1", [(0x6ff8, 8)]),                    # r15d: not read
    ("i386", "mov dword ptr [edi + 4], eax", [(0x6ffc, 4), (0x2004, 4)]),
    ("i386", "call 0x400100", [(0x6ffc, 4)]),
])
def test_the_words_written(arch, source, expected):
    assert written_words(_asm(source, arch), 0x400000, arch, REGS[arch]) == expected


def test_a_rip_relative_store_counts_from_the_next_instruction():
    code = _asm("lock inc qword ptr [rip + 0x100]", "x86_64")
    assert written_words(code, 0x400000, "x86_64", REGS["x86_64"])[1] == (0x400000 + len(code) + 0x100, 8)


def test_bytes_that_do_not_decode_give_only_the_stack_word():
    assert written_words(b"\x0f\xff", 0x400000, "x86_64", REGS["x86_64"]) == [(0x6ff8, 8)]


@given(arch=st.sampled_from(["i386", "x86_64"]), base=st.integers(0, 2**32 - 1),
       disp=st.integers(-2**31, 2**31 - 1), sp=st.integers(0x1000, 2**32 - 1))
def test_a_store_is_found_at_its_effective_address(arch, base, disp, sp):
    """Any `mov [edi/rdi + disp], imm`: the stack word first, then base + disp (wrapped to the
    address size), as the CPU computes it (Intel SDM vol. 1 3.7.5)."""
    reg, mask = ("edi", 2**32 - 1) if arch == "i386" else ("rdi", 2**64 - 1)
    code = _asm(f"mov dword ptr [{reg} {'+' if disp >= 0 else '-'} {abs(disp):#x}], 1", arch)
    word = 4 if arch == "i386" else 8
    sp_name = "esp" if arch == "i386" else "rsp"
    found = written_words(code, 0x400000, arch, {reg: base, sp_name: sp})
    assert found[0] == ((sp - word) & mask, word)
    assert ((base + disp) & mask, 4) in found
