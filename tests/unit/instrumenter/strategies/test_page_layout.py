"""The patent's trampoline page (instrumenter/strategies/page_layout.py), run on a bare Machine:
the handler gets the saved-register block, its changes are the thread's, everything else
(registers, flags, the red zone, the program's stack) is as it was, the call is made as the
psABI says (16-byte aligned stack, DF clear), and x87/SSE state survives with fxsave.
"""
import struct

import pytest

from emu.exits import TRAP
from instrumenter.insn.decode import decode
from instrumenter.insn.relocate import relocate
from instrumenter.strategies.page_layout import (BLOCK_SIZE, REGS, HandlerCall, lay_out,
                                                 reg_offset)
from instrumenter.strategies.handlers.user import UserHandler
from tests.unit.emu.guest import ARCHES, CODE, DATA, STACK_SP, asm, machine_with

ORIGINAL = CODE + 0xE00        # the probed instruction, then an int3 that ends the run
SCRATCH = DATA + 0x100
SEED_BLOCKS = ["Save_Registers", "Call_User_BreakpointHandler", "Restore_Registers",
               "OriginalInstruction_Copy", "Jump_NextInstruction", "User_BreakpointHandler"]


def _ax(arch):
    return "eax" if arch == "i386" else "rax"


def _page(arch, handler_source, *, fxsave=False, original="add {ax}, {bx}"):
    bx = "ebx" if arch == "i386" else "rbx"
    code = asm(original.format(ax=_ax(arch), bx=bx), arch, ORIGINAL)
    insn = decode(code, ORIGINAL, arch)
    call = HandlerCall(UserHandler("test.s", fxsave, source=handler_source), "uprobe:t:f",
                       SCRATCH, SCRATCH + 0x100)
    page = lay_out(CODE, arch, probe_address=ORIGINAL, handlers=[call],
                   copy=lambda at: relocate(insn, at, arch))
    m = machine_with(arch)
    m.mem.write(CODE, bytes(page.code))
    m.mem.write(ORIGINAL, code + b"\xcc")
    m.mem.write(STACK_SP - 128, bytes(range(128)) + bytes(range(128, 256)))
    return m, page, insn


def _run(m, insn):
    exit_ = m.run(CODE)
    assert exit_.kind == TRAP and exit_.pc == insn.next_address + 1, exit_


def _state(m):
    regs = m.registers()
    return regs.gpr, regs.flags & 0xCD5, m.mem.read(STACK_SP - 128, 256)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_page_has_the_seeds_blocks_in_order(arch):
    _, page, _ = _page(arch, "ret")
    assert [b.name for b in page.blocks] == SEED_BLOCKS
    assert page.blocks[-1].start % 16 == 0 and page.blocks[-1].owner == "uprobe:t:f"


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("flags", [0x2, 0x8D7, 0x402])        # 0x402: DF set by the program
def test_a_handler_that_changes_nothing_leaves_everything_as_unprobed(arch, flags):
    m, _, insn = _page(arch, "ret")
    bare = machine_with(arch)
    for machine in (m, bare):
        for n, reg in enumerate(REGS[arch][:7] if arch == "i386" else REGS[arch][:15]):
            if reg not in ("rsp", "esp", "rbp", "ebp"):
                machine.set_reg(reg, 0x1111 * (n + 1))
        machine.set_reg("eflags" if arch == "i386" else "rflags", flags)
    bare.mem.write(ORIGINAL, m.mem.read(ORIGINAL, 16))
    bare.mem.write(STACK_SP - 128, m.mem.read(STACK_SP - 128, 256))
    _run(m, insn)
    exit_ = bare.run(ORIGINAL)
    assert exit_.kind == TRAP
    assert _state(m) == _state(bare)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_handler_changes_registers_and_flags_through_the_block(arch):
    ax, bx = (("eax", "ebx") if arch == "i386" else ("rax", "rbx"))
    cx = "ecx" if arch == "i386" else "rcx"
    regs = "mov eax, dword ptr [esp + 4]; " if arch == "i386" else "mov rax, rdi; "
    word = "dword" if arch == "i386" else "qword"
    flags = reg_offset(arch, "eflags" if arch == "i386" else "rflags")
    source = (regs + f"mov {word} ptr [{ax} + {reg_offset(arch, bx)}], 40; "
              f"mov {word} ptr [{ax} + {reg_offset(arch, cx)}], 7; "
              f"or {word} ptr [{ax} + {flags}], 0x40; ret")       # ZF
    m, _, insn = _page(arch, source)
    m.set_reg(ax, 2)
    m.set_reg(bx, 1)
    m.set_reg(cx, 1)
    _run(m, insn)
    # The handler set ebx = 40 before the original `add eax, ebx` ran: 2 + 40.
    assert (m.reg(ax), m.reg(bx), m.reg(cx)) == (42, 40, 7)
    assert m.mem.read(STACK_SP - 128, 256) == bytes(range(256))      # red zone, caller's frame


@pytest.mark.parametrize("arch", ARCHES)
def test_the_block_holds_the_probed_address_and_stack_pointer(arch):
    sp, ip = ("esp", "eip") if arch == "i386" else ("rsp", "rip")
    word = "dword" if arch == "i386" else "qword"
    fmt = "<I" if arch == "i386" else "<Q"
    get = ("mov eax, dword ptr [esp + 4]; mov ecx, dword ptr [esp + 8]; " if arch == "i386"
           else "mov rax, rdi; mov rcx, rsi; ")
    ax, cx = ("eax", "ecx") if arch == "i386" else ("rax", "rcx")
    dx = "edx" if arch == "i386" else "rdx"
    source = (get + f"mov {dx}, {word} ptr [{ax} + {reg_offset(arch, ip)}]; mov {word} ptr [{cx}], {dx}; "
              f"mov {dx}, {word} ptr [{ax} + {reg_offset(arch, sp)}]; mov {word} ptr [{cx} + 8], {dx}; "
              f"mov {word} ptr [{cx} + 16], {ax}; mov {word} ptr [{cx} + 24], {sp}; "
              f"pushf{'d' if arch == 'i386' else 'q'}; pop {dx}; mov {word} ptr [{cx} + 32], {dx}; ret")
    m, _, insn = _page(arch, source)
    m.set_reg("eflags" if arch == "i386" else "rflags", 0x402)          # DF set
    _run(m, insn)
    size = struct.calcsize(fmt)
    ip_seen, sp_seen, block, sp_at_entry, flags = (
        struct.unpack(fmt, m.mem.read(SCRATCH + 8 * i, size))[0] for i in range(5))
    assert (ip_seen, sp_seen) == (ORIGINAL, STACK_SP)
    assert block == STACK_SP - 128 - BLOCK_SIZE[arch]                   # below the red zone
    assert (sp_at_entry + size) % 16 == 0                               # aligned at the call
    assert not flags & 0x400                                            # cld


@pytest.mark.parametrize("arch", ARCHES)
def test_fxsave_keeps_sse_state_that_the_handler_changes(arch):
    m, page, insn = _page(arch, "xorps xmm0, xmm0; pxor xmm7, xmm7; ret", fxsave=True)
    m.set_reg("xmm0", 0x1234_5678_9ABC_DEF0_1122_3344_5566_7788)
    m.set_reg("xmm7", 0x7777)
    _run(m, insn)
    assert (m.reg("xmm0"), m.reg("xmm7")) == (0x1234_5678_9ABC_DEF0_1122_3344_5566_7788, 0x7777)
    assert any(b"\x0f\xae" in bytes(page.code[b.start - CODE:b.end - CODE])
               for b in page.blocks if b.name == "Save_Registers")     # fxsave's opcode
