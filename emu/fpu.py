"""The x87/SSE state a program starts with, as Linux gives it.

Linux resets the FPU of a new image (execve: fpu_flush_thread -> fpstate_reset, arch/x86/kernel/
fpu/core.c) and of a signal handler (handle_signal -> fpu__clear_user_states, arch/x86/kernel/
signal.c) to `init_fpstate`: the state FNINIT leaves (Intel SDM Vol. 1 8.1.5-8.1.7 and Table 8-1:
FCW 0x037F = all exceptions masked, 64-bit precision, round to nearest; FSW 0; every tag empty)
plus MXCSR 0x1F80 (SDM Vol. 1 10.2.3.1: all SIMD exceptions masked, round to nearest) and zeroed
data registers. A bare Unicorn CPU starts with FCW 0 (24-bit precision, exceptions unmasked) and
MXCSR 0, which rounds every x87 result to float once the control word is reloaded.
"""
from dataclasses import dataclass

from unicorn import x86_const as X

from .registers import X87_STACK, XMM

FCW_INIT = 0x037F
MXCSR_INIT = 0x1F80
FTW_ALL_EMPTY = 0xFFFF      # the full tag word: 11b (empty) for each of the 8 registers


def reset_fpu(machine) -> None:
    """Put `machine`'s x87/SSE state where Linux's init_fpstate puts it."""
    machine.set_reg("fpcw", FCW_INIT)
    machine.set_reg("fpsw", 0)
    machine.set_reg("mxcsr", MXCSR_INIT)
    for name in X87_STACK:
        machine.set_reg(name, 0)
    machine.set_reg("fptag", FTW_ALL_EMPTY)     # after the stack: writing a register may tag it
    for name in XMM[:16 if machine.arch.bits == 64 else 8]:
        machine.set_reg(name, 0)


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


_FPU_CONTROL_IDS = (X.UC_X86_REG_FPCW, X.UC_X86_REG_FPSW, X.UC_X86_REG_FPTAG, X.UC_X86_REG_FOP,
                    X.UC_X86_REG_FIP, X.UC_X86_REG_FCS, X.UC_X86_REG_FDP, X.UC_X86_REG_FDS,
                    X.UC_X86_REG_MXCSR)


def read_fpu(machine) -> FpuState:
    """The thread's x87/SSE state from the CPU. The physical registers are Unicorn's FP0-7
    (its ST0-7 give only significands)."""
    uc = machine.uc
    control = [uc.reg_read(r) for r in _FPU_CONTROL_IDS]
    regs = tuple(tuple(uc.reg_read(X.UC_X86_REG_FP0 + i)) for i in range(8))
    xmm = tuple(uc.reg_read(getattr(X, f"UC_X86_REG_XMM{i}"))
                for i in range(16 if machine.arch.bits == 64 else 8))
    return FpuState(*control, regs, xmm)


def write_fpu(machine, state: FpuState) -> None:
    """Load `state` into the CPU, as FXRSTOR/XRSTOR would."""
    uc = machine.uc
    for i, reg in enumerate(state.regs):
        uc.reg_write(X.UC_X86_REG_FP0 + i, reg)
    for reg_id, value in zip(_FPU_CONTROL_IDS, (state.fcw, state.fsw, state.ftw, state.fop,
                                                 state.fip, state.fcs, state.fdp, state.fds,
                                                 state.mxcsr)):
        uc.reg_write(reg_id, value)     # the tag word after the registers: a write may tag one
    for i, value in enumerate(state.xmm):
        uc.reg_write(getattr(X, f"UC_X86_REG_XMM{i}"), value)
