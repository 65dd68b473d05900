"""Signal frames in the profiler's walk (issue 26): the restorer is known by its code (musl's and
glibc's __restore/__restore_rt, Linux's i386 retcode), and the interrupted registers are read from
frames the kernel model builds (kernel_model/signals/frame.py), on both arches, rt and non-rt."""
from types import SimpleNamespace

import pytest

from emu.memory import MemoryAccessError
from instrumenter.profiler.sigframe import RESTORERS, SignalReturns
from instrumenter.profiler.unwind import Unwinder, _plain_form, _Walk
from kernel_model.debug import PROT_EXEC, PROT_READ, PROT_WRITE
from kernel_model.signals.frame import (RETCODE32, RETCODE_RT32, RT32_SIZE, SF32_SIZE, SavedRegisters,
                                        build_frame32, build_rt_frame32, build_rt_frame64, pack_siginfo)
from loader.cfi import FrameRule

CODE, HANDLER, INTERRUPTED, STACK, FRAME = 0x401000, 0x402000, 0x403456, 0x7FF00000, 0x7FF08000
GPRS = {32: ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"),
        64: ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
             "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")}


class Memory:
    """The door's view of one process: code at CODE (a restorer), a stack."""

    def __init__(self, bits: int):
        self.bits = bits
        self.bytes = {}

    def write(self, address: int, data: bytes) -> None:
        for i, byte in enumerate(data):
            self.bytes[address + i] = byte

    def read(self, address: int, size: int) -> bytes:
        if any(a not in self.bytes for a in range(address, address + size)):
            raise MemoryAccessError(address, size)
        return bytes(self.bytes[a] for a in range(address, address + size))

    # ---- the door -------------------------------------------------------------------------
    def cpu(self, process):
        return SimpleNamespace(read=self.read, arch=SimpleNamespace(bits=self.bits))

    def area_at(self, process, address):
        if STACK <= address < STACK + 0x10000:
            return SimpleNamespace(start=STACK, end=STACK + 0x10000, perms=PROT_READ | PROT_WRITE, name=b"[stack]")
        return SimpleNamespace(start=CODE, end=CODE + 0x4000, perms=PROT_READ | PROT_EXEC, name=b"prog")

    def image_map_version(self, process):
        return (0, 0)

    def images(self, process):
        return []

    def image_at(self, process, address):
        return None


class HandlerRules(Unwinder):
    """CFI at the handler's entry only: CFA = SP + word, the return address at CFA - word."""

    def rule_at(self, process, lookup):
        word = self.door.bits // 8
        ip, sp = ("rip", "rsp") if word == 8 else ("eip", "esp")
        rule = FrameRule(cfa=(sp, word), saved={ip: ("at", -word)}, return_register=ip) \
            if lookup == HANDLER else None
        return rule, _plain_form(rule)


def _interrupted(bits: int) -> SavedRegisters:
    """Registers of the interrupted code, each different, the SP above the frame."""
    gpr = {name: 0x1000 * (i + 1) + 0x11 for i, name in enumerate(GPRS[bits])}
    gpr["esp" if bits == 32 else "rsp"] = FRAME + 0x2000
    return SavedRegisters(gpr=gpr, pc=INTERRUPTED, flags=0x246, segs={}, mask=0)


def _frame(memory: Memory, kind: str, restorer: int) -> SavedRegisters:
    """The kernel model's frame at FRAME (its pretcode there), as _setup_frame writes it."""
    saved = _interrupted(memory.bits)
    if kind == "rt64":
        memory.write(FRAME, build_rt_frame64(saved, pack_siginfo(8, 11, 0), restorer, (0, 2, 0)))
    elif kind == "rt32":
        memory.write(FRAME, b"\0" * RT32_SIZE)
        memory.write(FRAME, build_rt_frame32(FRAME, 11, saved, pack_siginfo(4, 11, 0), restorer, (0, 2, 0)))
    else:
        memory.write(FRAME, b"\0" * SF32_SIZE)
        for offset, data in build_frame32(FRAME, 11, saved, restorer):
            memory.write(FRAME + offset, data)
    return saved


def _restored(saved: SavedRegisters, bits: int) -> dict:
    return {**saved.gpr, ("rip" if bits == 64 else "eip"): saved.pc}


CASES = [(64, "rt64", 0), (32, "rt32", 1), (32, "sigframe", 0)]     # restorer: RESTORERS[bits][i]


def _walk(memory: Memory, registers: dict, depth: int) -> _Walk:
    unwinder = HandlerRules(memory)
    walk = _Walk(unwinder, SimpleNamespace(image=None), registers)
    walk.stack = walk.run(depth)
    return walk


@pytest.mark.parametrize("bits,kind,which", CASES)
def test_a_handler_returns_through_the_restorer_to_the_interrupted_registers(bits, kind, which):
    memory = Memory(bits)
    restorer = RESTORERS[bits][which]
    memory.write(CODE, restorer.code)
    saved = _frame(memory, kind, CODE)
    ip, sp = ("rip", "rsp") if bits == 64 else ("eip", "esp")
    walk = _walk(memory, {ip: HANDLER, sp: FRAME}, depth=3)       # at the handler's entry
    assert walk.stack.frames == (HANDLER, CODE, INTERRUPTED)
    assert walk.regs == _restored(saved, bits)                      # every register, as saved


@pytest.mark.parametrize("bits,kind,which", CASES)
def test_an_interrupted_pc_anywhere_in_the_restorer_is_a_signal_frame(bits, kind, which):
    memory = Memory(bits)
    restorer = RESTORERS[bits][which]
    memory.write(CODE, restorer.code)
    saved = _frame(memory, kind, CODE)
    ip, sp = ("rip", "rsp") if bits == 64 else ("eip", "esp")
    word = bits // 8
    for position in restorer.positions:
        popped = word if kind == "sigframe" and position > 0 else 0        # `pop %eax` took sig
        walk = _walk(memory, {ip: CODE + position, sp: FRAME + word + popped}, depth=2)
        assert walk.stack.frames == (CODE + position, INTERRUPTED), position
        assert walk.regs == _restored(saved, bits), position


@pytest.mark.parametrize("kind,retcode", [("rt32", RETCODE_RT32), ("sigframe", RETCODE32)])
def test_linux_i386_retcode_in_the_frame_is_a_restorer(kind, retcode):
    """Without SA_RESTORER the kernel's frame returns into its own retcode, on the stack."""
    memory = Memory(32)
    saved = _frame(memory, kind, 0)
    pretcode = int.from_bytes(memory.read(FRAME, 4), "little")
    assert memory.read(pretcode, len(retcode)) == retcode
    walk = _walk(memory, {"eip": HANDLER, "esp": FRAME}, depth=3)
    assert walk.stack.frames == (HANDLER, pretcode, INTERRUPTED)
    assert walk.regs == _restored(saved, 32)


@pytest.mark.parametrize("bits", [32, 64])
def test_a_return_address_inside_a_restorer_or_other_code_is_not_one(bits):
    memory = Memory(bits)
    signals = SignalReturns(memory)
    cpu = memory.cpu(None)
    for restorer in RESTORERS[bits]:
        memory.write(CODE, b"\x90" * 8 + restorer.code + b"\x90" * 8)
        for position in restorer.positions:
            at = CODE + 8 + position
            found = signals.at(None, cpu, bits, at, interrupted=True)
            assert (found.start, found.restorer, found.position) == (CODE + 8, restorer, position)
            assert (signals.at(None, cpu, bits, at, interrupted=False) is None) == (position > 0)
        for not_one in (CODE + 7, CODE + 8 + 2, CODE + 8 + len(restorer.code)):
            assert signals.at(None, cpu, bits, not_one, interrupted=True) is None
    memory.write(CODE, b"\xb8\xad\x00\x00\x00\x0f\x05")      # rt_sigreturn's number, not its call
    assert signals.at(None, cpu, bits, CODE, interrupted=True) is None
