"""instrumenter/profiler/frameless.py: the instructions a walk steps out of by the stack top."""
from types import SimpleNamespace

import pytest

from instrumenter.profiler.frameless import in_plt, is_pic_thunk, is_plt_jump, is_ret


@pytest.mark.parametrize("code,bits", [
    (b"\xff\x25\x12\x34\x56\x00", 64),          # jmp *disp32(%rip)
    (b"\xf2\xff\x25\x12\x34\x56\x00", 64),      # bnd jmp *disp32(%rip) (.plt.sec with MPX)
    (b"\xf3\x0f\x1e\xfa", 64),                  # endbr64 (a CET .plt.sec entry)
    (b"\xff\xa3\x0c\x00\x00\x00", 32),          # jmp *0xc(%ebx) (an i386 PIC PLT)
    (b"\xff\x25\x0c\xa0\x04\x08", 32),          # jmp *abs32 (an i386 non-PIC PLT)
    (b"\xf3\x0f\x1e\xfb", 32),                  # endbr32
])
def test_plt_stub_jumps(code, bits):
    assert is_plt_jump(code, bits)


@pytest.mark.parametrize("code,bits", [
    (b"\xff\x35\x12\x34\x56\x00", 64),          # push *disp32(%rip): PLT0's, which moves the stack
    (b"\x68\x01\x00\x00\x00", 32),              # push $1: a lazy entry's second instruction
    (b"\xff\xd0", 64),                          # call *%rax (ff /2)
    (b"\xe9\x00\x00\x00\x00", 64),              # jmp rel32
    (b"\xf3\x0f\x1e\xfa", 32),                  # endbr64 in i386 code is not endbr32
])
def test_other_instructions_are_not(code, bits):
    assert not is_plt_jump(code, bits)


def test_ret_and_pic_thunks():
    assert is_ret(b"\xc3\x90") and not is_ret(b"\xc2\x08\x00")      # ret imm16 pops more
    assert is_pic_thunk(b"\x8b\x1c\x24\xc3", 32) and is_pic_thunk(b"\x8b\x0c\x24\xc3", 32)
    assert not is_pic_thunk(b"\x8b\x1c\x24\xc3", 64) and not is_pic_thunk(b"\x8b\x1c\x25\xc3", 32)


def test_in_plt_by_the_section_headers():
    image = SimpleNamespace(sections={".plt": (0x401000, 0x100), ".text": (0x401100, 0x5000)})
    assert in_plt(image, 0x401000) and in_plt(image, 0x4010ff)
    assert not in_plt(image, 0x401100) and not in_plt(None, 0x401000)
    assert not in_plt(SimpleNamespace(sections={}), 0x401000)
