"""The batched register paths a signal delivery and its sigreturn take (emu/machine_registers.py
registers() and set_regs, emu/fpu.py's kept conversions): the same values as one register at
a time, and a kept FPU conversion never stands for another state."""
import dataclasses

from emu.fpu import FCW_INIT, init_state, read_fpu, write_fpu
from emu.machine import Machine
from emu.registers import gpr_names


def test_set_regs_writes_what_reg_reads(arch):
    m = Machine(arch)
    names = gpr_names(m.arch)
    values = {name: 0x1111 * (i + 1) for i, name in enumerate(names)}
    m.set_regs(values)
    assert {name: m.reg(name) for name in names} == values
    m.set_regs({names[0]: -1})                  # a negative value is its two's complement
    assert m.reg(names[0]) == (1 << m.arch.bits) - 1


def test_registers_reads_each_register_as_reg_does(arch):
    m = Machine(arch)
    m.set_regs({name: 0x40 + i for i, name in enumerate(gpr_names(m.arch))})
    regs = m.registers()
    assert regs.gpr == {name: m.reg(name) for name in gpr_names(m.arch)}
    assert regs.flags == m.reg(m.arch.flags)
    assert regs.selectors == {s: m.reg(s) for s in ("cs", "ss", "ds", "es", "fs", "gs")}


def test_kept_fpu_conversions_follow_the_state(arch):
    m = Machine(arch)
    bits = m.arch.bits
    other = dataclasses.replace(init_state(bits), fcw=FCW_INIT ^ 0x0C00,
                                xmm=(7,) + (0,) * (len(init_state(bits).xmm) - 1))
    for state in (init_state(bits), other, init_state(bits), other):
        write_fpu(m, state)
        assert read_fpu(m) == state
