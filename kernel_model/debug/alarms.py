"""Time and code in use, for a tool that changes its probes while the program runs (part of
the debug interface, kernel_model/debug/; US 9,336,001: "an existing breakpoint may be removed as
desired").

- `at_instruction(count, callback)`: run `callback()` when the run's instruction clock — the
  virtual time of every record — reaches `count`, at a safe point (kernel_model/
  time/insn_alarms.py); `at_safe_point(callback)`: as soon as the guest is between instructions
  outside every hook (a probe's action that wants to place or remove probes asks for this).
- `code_addresses_in_use(process)`: every address a thread of the space will execute or
  return to without the tool's say: each live thread's PC and the PCs saved in its pending
  signal frames (sigreturn resumes there). What uprobes checks before it reuses an XOL slot;
  return addresses on the stacks are the tool's own to know (its uretprobe landings).
"""
from emu.registers import REGISTER_IDS

from ..time.insn_alarms import InstructionAlarms
from ..process.proc import ZOMBIE


class InstructionTime:
    _alarms: InstructionAlarms | None = None

    def __init__(self, kernel, instruction_clock):
        self._kernel = kernel
        self.instruction_clock = instruction_clock      # the run's one clock (facade.py)

    @property
    def instruction_alarms(self) -> InstructionAlarms:
        alarms = self._alarms
        if alarms is None:
            alarms = self._alarms = InstructionAlarms(self.instruction_clock)
        return alarms

    def instruction_count(self) -> int:
        """The run's instruction clock now (exact inside a hook too)."""
        kernel = self._kernel
        if kernel is not None and kernel.in_hook and kernel.current is not None:
            machine = kernel.current.process.machine
            if machine.icount is self.instruction_clock:
                return machine.instructions_retired
        return self.instruction_clock.total

    def count_instructions(self, process) -> None:
        """Count every instruction `process` runs from now on, exactly, on the run's one clock
        (emu/icount.py): `instructions_retired` is then the virtual time of its records.
        Idempotent; threads and a vfork child share their Machine, hence its counting. Slows
        translated code (a helper call per instruction, docs/unicorn.md), so only the processes
        a tool follows are counted."""
        process.machine.count_instructions(self.instruction_clock)

    def at_instruction(self, count: int, callback) -> None:
        self.instruction_alarms.add(count, callback)
        kernel = self._kernel
        if kernel is not None and kernel.in_hook and kernel.current is not None:
            kernel.current.process.machine.stop()        # let the run loop see it now

    def at_safe_point(self, callback) -> None:
        self.at_instruction(0, callback)

    def code_addresses_in_use(self, process) -> list[int]:
        """PCs of every live thread running in `process`'s space, live or saved, and the PCs
        its pending signal frames will return to, in thread creation order."""
        space = process.space
        kernel = self._kernel
        pc = space.machine.arch.pc
        addresses = []
        for thread in kernel.scheduler.threads:
            if thread.process.space is not space or thread.state == ZOMBIE:
                continue
            context = thread.context
            addresses.append(space.machine.reg(pc) if context is None
                             else context.reg_read(REGISTER_IDS[pc]))
            addresses += [saved.reg_read(REGISTER_IDS[pc]) for _, saved in thread.saved_contexts]
        return addresses

    @staticmethod
    def signal_name(number: int) -> str:
        """strace's name of signal `number` (SIGUSR1, SIGRTMIN, SIGRT_2)."""
        from ..signals import SIGNAL_NAMES
        return SIGNAL_NAMES.get(number, str(number))
