"""Exact instruction counts from the block clock: the virtual time of traces without Unicorn's
per-instruction counting hook (issue 31: with it, `trace` on code no probe touches cost several
times `run`; bench/trace_cost.py measures the two).

Unicorn's own count (icount.py) calls a helper before every instruction. The block clock
(block_clock.py) adds a block's instructions as the block begins, one C call per block, and
remembers the block begun last. Both counts agree at every point where a tool can read one,
because Unicorn reports events only at these points:

- an instruction that traps (int3, int n, syscall) ends its translated block (QEMU's
  translate.c ends the block after it: gen_interrupt, the syscall's gen_eob), so when its
  hook runs every instruction of the blocks begun has begun: the block clock's count is
  Unicorn's, with nothing to correct;
- an instruction that faults (a page fault, #UD, #DE, #GP: RDTSC under CR4.TSD, which glibc's
  ld.so runs at start) may sit in the middle of its block: Unicorn counted it (its counting
  hook runs before the instruction) and none after it, and the CPU leaves the block there for
  good (QEMU's cpu_loop_exit), so the block's instructions after the faulting one come off
  the run's count for good (`fault_at`), found by decoding the block from its start. A run
  goes on after a fault its handler took care of (the kernel emulated the RDTSC, moved the IP
  past it) with a new block; a faulting instruction that runs again (the kernel mapped the
  page) begins a new block and is counted again, as Unicorn counts it again.

Not seen, and so not corrected: a store into the very block that is running (code that
rewrites the instructions just ahead of it). QEMU leaves the block after that store without a
hook (translate-all.c, precise self-modifying code) and runs the rest from a new translation,
so the instructions after the store are counted twice: with the old block and with the new. No sample, libc or loader does it;
a tool's own patches are made in hooks, at the end of a block. Measured on 23 trace commands
(static and dynamic programs, every strategy, forks, threads, signals): ts identical.

What the block clock cannot see either are code hooks in the middle of a block (a code breakpoint, a
watchpoint, a LOCK-prefix site: they stop before or inside an instruction). A Machine that has
one runs with Unicorn's count (Machine.exact_count_users). The table of block counts is
emptied when code was patched (code_epoch), at the start of each run.
"""
from __future__ import annotations

import ctypes

from .block_clock import clock_of


class BlockCount:
    """Instructions begun since `begin()` on one Machine, exact at every event (module doc).
    `value` is what Unicorn's counter would hold at the same point of the same run."""

    def __init__(self, machine):
        self._machine = machine
        self._clock = clock_of(machine)       # installs the block hook (flushes the code cache)
        self._state = state = self._clock.state
        # `value` is executed.value - offset: the C hook's count read through a ctypes integer
        # over its field, and the count at begin() plus the instructions of faulting blocks
        # never begun, so that the Machine's clock reads it without a call (issue 31: the
        # clock is read on every probe hit, Machine.read_clock)
        self.executed = ctypes.c_int64.from_buffer(state, type(state).executed.offset)
        self.offset = 0
        self._decoder = None

    def begin(self) -> None:
        self._clock.forget_changed_code()
        self.offset = self._state.executed

    @property
    def value(self) -> int:
        return self.executed.value - self.offset

    def fault_at(self, pc: int) -> None:
        """The instruction at `pc` faulted: it began, and the rest of its block never will."""
        start, size, insns = self._clock.last_block()
        if not start <= pc < start + size:
            return                             # it began a block of its own (size 0 or 1 insn)
        self.offset += insns - self._begun(start, size, pc)
        self._machine.clock_parts.offset = self.offset     # the C hook's copy (clock_parts.py)

    def _begun(self, start: int, size: int, pc: int) -> int:
        """Instructions of the block [start, start + size) that begin at or before `pc`."""
        code = bytes(self._machine.uc.mem_read(start, size))
        begun, end = 0, start
        for address, length, _, _ in self._disassembler().disasm_lite(code, start):
            if address > pc:
                return begun
            begun, end = begun + 1, address + length
        # Bytes capstone cannot decode end the block as one instruction (block_clock.c decode).
        return begun + (end <= pc)

    def _disassembler(self):
        if self._decoder is None:
            import capstone        # only a traced run that faults mid-block needs it
            mode = capstone.CS_MODE_64 if self._machine.arch.bits == 64 else capstone.CS_MODE_32
            self._decoder = capstone.Cs(capstone.CS_ARCH_X86, mode)
        return self._decoder
