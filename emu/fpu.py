"""The x87/SSE state: what a program starts with, as Linux gives it, and the whole user state
read and loaded at once (a signal frame holds it: kernel_model/signals/fpframe.py).

Linux resets the FPU of a new image (execve: fpu_flush_thread -> fpstate_reset, arch/x86/kernel/
fpu/core.c) and of a signal handler (handle_signal -> fpu__clear_user_states, arch/x86/kernel/
signal.c) to `init_fpstate`: the state FNINIT leaves (Intel SDM Vol. 1 8.1.5-8.1.7 and Table 8-1:
FCW 0x037F = all exceptions masked, 64-bit precision, round to nearest; FSW 0; every tag empty)
plus MXCSR 0x1F80 (SDM Vol. 1 10.2.3.1: all SIMD exceptions masked, round to nearest) and zeroed
data registers. A bare Unicorn CPU starts with FCW 0 (24-bit precision, exceptions unmasked) and
MXCSR 0, which rounds every x87 result to float once the control word is reloaded.
"""
import ctypes
import struct
from dataclasses import dataclass

from unicorn import UC_ERR_OK, UcError
from unicorn import x86_const as X

from .errors import MachineError
from .internals.binding import handle, uclib


FCW_INIT = 0x037F
MXCSR_INIT = 0x1F80
FTW_ALL_EMPTY = 0xFFFF      # the full tag word: 11b (empty) for each of the 8 registers


def reset_fpu(machine) -> None:
    """Put `machine`'s x87/SSE state where Linux's init_fpstate puts it."""
    write_fpu(machine, init_state(machine.arch.bits))


@dataclass(frozen=True)
class FpuState:
    """The user x87/SSE state as FXSAVE/XSAVE see it (Intel SDM Vol. 1 10.5.1, Table 10-2).

    `ftw` is the full tag word (2 bits per physical register, 11b empty) and `regs` the eight
    physical registers R0..R7 as (significand, sign and exponent); ST(i) is R((TOP + i) & 7),
    TOP being FSW bits 13..11. `xmm` holds XMM0-7 (i386) or XMM0-15 (x86-64).
    """
    fcw: int
    fsw: int
    ftw: int
    fop: int
    fip: int
    fcs: int
    fdp: int
    fds: int
    mxcsr: int
    regs: tuple
    xmm: tuple

    @property
    def top(self) -> int:
        return (self.fsw >> 11) & 7

    def stack(self) -> tuple:
        """ST(0)..ST(7): the order FXSAVE and FSAVE store the registers in."""
        return tuple(self.regs[(self.top + i) & 7] for i in range(8))


def init_state(bits: int) -> FpuState:
    """init_fpstate (what reset_fpu sets and XRSTOR loads for a component in its init state)."""
    return FpuState(FCW_INIT, 0, FTW_ALL_EMPTY, 0, 0, 0, 0, 0, MXCSR_INIT, ((0, 0),) * 8,
                    (0,) * (16 if bits == 64 else 8))


# The registers of an FpuState in one uc_reg_read_batch/uc_reg_write_batch call (a signal
# delivery and its sigreturn move all of them, ~100 binding calls otherwise). Each value gets
# a 16-byte slot: FCW/FSW/FTW/FOP/FCS/FDS are 16-bit, MXCSR 32-bit, FIP/FDP 64-bit, FP0-7 an
# uc_x86_float80 (64-bit significand, 16-bit sign and exponent), XMM 128-bit.
_CONTROL = (X.UC_X86_REG_FPCW, X.UC_X86_REG_FPSW, X.UC_X86_REG_FPTAG, X.UC_X86_REG_FOP,
            X.UC_X86_REG_FIP, X.UC_X86_REG_FCS, X.UC_X86_REG_FDP, X.UC_X86_REG_FDS,
            X.UC_X86_REG_MXCSR)
_WIDTHS = (2, 2, 2, 2, 8, 2, 8, 2, 4)
_SLOT = 16


class _FpuRegisters:
    """The batch for one register width (8 XMM registers in 32-bit mode, 16 in 64-bit)."""

    def __init__(self, bits: int):
        self.xmm_count = 16 if bits == 64 else 8
        ids = _CONTROL + tuple(X.UC_X86_REG_FP0 + i for i in range(8)) + \
            tuple(getattr(X, f"UC_X86_REG_XMM{i}") for i in range(self.xmm_count))
        self.count = len(ids)
        self.ids = (ctypes.c_int * self.count)(*ids)
        self.buffer = ctypes.create_string_buffer(_SLOT * self.count)
        base = ctypes.addressof(self.buffer)
        self.pointers = (ctypes.c_void_p * self.count)(*(base + _SLOT * i for i in range(self.count)))
        # A signal's delivery and its sigreturn move the same few states over and over (the
        # init state, the interrupted code's): their conversions are kept, as the packing in
        # Python outweighs the batch call itself (LTP signal06 delivers 150 000 signals)
        self._states: dict[bytes, FpuState] = {}
        self._packed: dict[FpuState, bytes] = {}

    def read(self, handle) -> FpuState:
        ctypes.memset(self.buffer, 0, len(self.buffer))
        _check(uclib.uc_reg_read_batch(handle, self.ids, self.pointers, self.count))
        raw = self.buffer.raw
        state = self._states.get(raw)
        if state is None:
            state = _remember(self._states, raw, self._unpack(raw))
        return state

    def _unpack(self, raw: bytes) -> FpuState:
        control = [int.from_bytes(raw[_SLOT * i:_SLOT * i + w], "little") for i, w in enumerate(_WIDTHS)]
        at = _SLOT * len(_CONTROL)
        regs = tuple(struct.unpack_from("<QH", raw, at + _SLOT * i) for i in range(8))
        at += _SLOT * 8
        xmm = tuple(int.from_bytes(raw[at + _SLOT * i:at + _SLOT * (i + 1)], "little")
                    for i in range(self.xmm_count))
        return FpuState(*control, regs, xmm)

    def write(self, handle, state: FpuState) -> None:
        raw = self._packed.get(state)
        if raw is None:
            raw = _remember(self._packed, state, self._pack(state))
        ctypes.memmove(self.buffer, raw, len(raw))
        # Unicorn writes in order: FPTAG (3rd) lands after FPSW but before FP0-7, and writing
        # a data register leaves the tags alone, so the tag word stays what `state` says.
        _check(uclib.uc_reg_write_batch(handle, self.ids, self.pointers, self.count))

    def _pack(self, state: FpuState) -> bytes:
        raw = bytearray(_SLOT * self.count)
        control = (state.fcw, state.fsw, state.ftw, state.fop, state.fip, state.fcs, state.fdp,
                   state.fds, state.mxcsr)
        for i, value in enumerate(control):
            raw[_SLOT * i:_SLOT * i + 8] = value.to_bytes(8, "little")
        at = _SLOT * len(_CONTROL)
        for i, reg in enumerate(state.regs):
            struct.pack_into("<QH", raw, at + _SLOT * i, *reg)
        at += _SLOT * 8
        for i, value in enumerate(state.xmm):
            raw[at + _SLOT * i:at + _SLOT * (i + 1)] = value.to_bytes(16, "little")
        return bytes(raw)


def _remember(cache: dict, key, value):
    """Keep `value` under `key`, in a cache of a few entries (cleared when full)."""
    if len(cache) >= 32:
        cache.clear()
    cache[key] = value
    return value


def _check(error: int) -> None:
    if error != UC_ERR_OK:
        raise MachineError(f"FPU register batch: {UcError(error)}")


_BATCHES = {32: _FpuRegisters(32), 64: _FpuRegisters(64)}


def read_fpu(machine) -> FpuState:
    """The thread's x87/SSE state from the CPU. The physical registers are Unicorn's FP0-7
    (its ST0-7 give only significands)."""
    return _BATCHES[machine.arch.bits].read(handle(machine.uc))


def write_fpu(machine, state: FpuState) -> None:
    """Load `state` into the CPU, as FXRSTOR/XRSTOR would."""
    _BATCHES[machine.arch.bits].write(handle(machine.uc), state)
