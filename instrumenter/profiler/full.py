"""Full instrumentation, the baseline seed 004 argues against: every function of the program
hooked at entry and exit for the whole run ("a trace tool may log every entry into and every
exit from a module subroutine method function"), with the same hooks the walk-up uses
(hooks.py: an entry probe whose handler arms the exit through the return landing), so the
comparison of hooks executed and guest instructions added is like for like.

Not hooked: code no `call` enters, whose return-address slot is not one — the ELF entry
(`_start`), the signal return trampolines (entered by the handler's `ret`); and the functions
that return twice or elsewhere (setjmp, vfork, fork's child, getcontext), which a swapped return
address would break as it breaks Linux's uretprobes; and the i386 PIC thunks, which return their
own return address. In a dynamic program's stripped code the functions are the ones its FDEs
bound, as for the walk-up (callsite.Functions).
"""
from __future__ import annotations

import re

from ..tracing.probes import Probe
from .callers import CallerList, FunctionId, MEASURING
from .callsite import Functions
from .hooks import Activations, Hooks

NOT_CALLED = re.compile(r"^(_start|_start_c|_dlstart.*|__restore.*|__clone|clone|__unmapself"
                        r"|.*setjmp.*|.*longjmp.*|.*vfork.*|getcontext|swapcontext|__cp_begin.*)$")


def hookable_functions(door, process) -> list[FunctionId]:
    """Every sized function symbol of the program's own object, by address; in a dynamic
    program, also every function of its stripped code (no symbol covers it) that an FDE
    bounds — the functions the walk-up can hook there (callsite.Functions)."""
    images = door.images(process)
    program = next((m for m in images if m.path == process.exe), images[0] if images else None)
    if program is None or program.image is None:
        return []
    entry = program.image.entry
    functions = {}
    for symbol in program.image.symbols.functions():
        if symbol.size and symbol.addr != entry and not NOT_CALLED.match(symbol.name):
            functions.setdefault(symbol.addr, FunctionId(program.name, symbol.name, symbol.addr))
    if program.image.interp is not None:
        for function in _stripped_functions(door, process, program):
            if function.entry != entry:
                functions.setdefault(function.entry, function)
    return [functions[a] for a in sorted(functions) if not _pc_thunk(door, process, a)]


def _pc_thunk(door, process, address: int) -> bool:
    """The i386 PIC thunk (gcc's __x86.get_pc_thunk.REG: `mov (%esp),REG; ret`) returns its own
    return address: once its exit is armed that is the landing's, and the GOT base computed
    from it is wrong."""
    code = door.read_memory(process, address, 4)
    return code[0] == 0x8B and code[1] & 0xC7 == 0x04 and code[2] == 0x24 and code[3] == 0xC3


def _stripped_functions(door, process, program) -> list[FunctionId]:
    """The FDE-bounded functions of `program` that no symbol covers. Only for a dynamic program:
    its setjmp, vfork and the like are libc's, in another object, while in a static one they
    would be among these with no name to leave them out by (NOT_CALLED)."""
    finder = Functions(door)
    symbols = program.image.symbols
    found = []
    for start in finder.table(program.image).fde_starts():
        if symbols.function_at(start) is None:
            function = finder.at(process, start)
            if function is not None and function.entry == start:
                found.append(function)
    return found


class FullInstrumentation:
    """Hooks every function of `process`'s program with an entry/exit pair for the run."""

    def __init__(self, door, session):
        self.door, self.session = door, session
        self.callers = CallerList()
        self.activations = Activations()
        self.hooks = Hooks(session, door, on_identify=None, on_enter=self._entered,
                           on_exit=self._exited)

    def probes(self, process) -> list[Probe]:
        """The probes to give the session before it attaches (placed with the program)."""
        probes = []
        for function in hookable_functions(self.door, process):
            entry = self.callers.entry(function)
            entry.state = MEASURING
            probes.append(self.hooks.make_probe(process, function, f"full:{function.name}",
                                                self._action(entry)))
        return probes

    def _action(self, entry):
        return lambda ctx: self.hooks.enter(ctx, entry)

    def _entered(self, ctx, entry) -> None:
        entry.hook_runs += 1
        entry.metric.invocations += 1
        sp, _, chained = self.hooks.entry_state(ctx)
        self.activations.enter(ctx.thread.tid, entry, sp, *self.hooks.clocks(ctx), chained)
        self.hooks.arm_exit(ctx, entry.function.entry)

    def _exited(self, ctx) -> None:
        self.hooks.count_exit()
        cpu = self.door.cpu(ctx.process)
        done = self.activations.leave(ctx.thread.tid, cpu.sp - cpu.arch.word,
                                      *self.hooks.clocks(ctx))
        if done is not None:
            done.entry.hook_runs += 1
