"""The x87/SSE state a program starts with, as Linux gives it.

Linux resets the FPU of a new image (execve: fpu_flush_thread -> fpstate_reset, arch/x86/kernel/
fpu/core.c) and of a signal handler (handle_signal -> fpu__clear_user_states, arch/x86/kernel/
signal.c) to `init_fpstate`: the state FNINIT leaves (Intel SDM Vol. 1 8.1.5-8.1.7 and Table 8-1:
FCW 0x037F = all exceptions masked, 64-bit precision, round to nearest; FSW 0; every tag empty)
plus MXCSR 0x1F80 (SDM Vol. 1 10.2.3.1: all SIMD exceptions masked, round to nearest) and zeroed
data registers. A bare Unicorn CPU starts with FCW 0 (24-bit precision, exceptions unmasked) and
MXCSR 0, which rounds every x87 result to float once the control word is reloaded.
"""
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
