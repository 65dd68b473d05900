"""Full instrumentation, the baseline US 7,823,129 argues against: every function hooked at entry
and exit for the whole run ("a trace tool may log every entry into and every exit from a module
subroutine method function"), with the same hooks the walk-up uses (hooks.py: an entry probe
whose handler arms the exit through the return landing), so the comparison of hooks executed
and guest instructions added is like for like. Every function of every module: the program,
ld.so and each library as it is mapped, and the programs the run execs (the session asks the
provider for an object's probes as the object comes: session.providers), since the walk-up
hooks its hot spots wherever they are.

Not hooked: code no `call` enters, whose return-address slot is not one — the ELF entry
(`_start`), the signal return trampolines (entered by the handler's `ret`); and the functions
that return twice or elsewhere (setjmp, vfork, getcontext), which a swapped return address
would break as it breaks Linux's uretprobes: by name, and by their code where they have none
(return_slot.py, which finds the i386 PIC thunks too). In stripped code the functions are the
ones its FDEs bound, as for the walk-up (callsite.Functions).
"""
from __future__ import annotations

import functools
import re

from ..probes.definitions import Probe
from .callers import CallerList, FunctionId, MEASURING
from .callsite import Functions
from .hooks import Activations, Hooks
from .return_slot import uses_return_address

NOT_CALLED = re.compile(r"^(_start|_start_c|_dlstart.*|__restore.*|__clone|clone|__unmapself"
                        r"|.*setjmp.*|.*longjmp.*|.*vfork.*|getcontext|swapcontext|__cp_begin.*)$")


def hookable_functions(door, process, program) -> list[FunctionId]:
    """Every sized function symbol of the object `program` maps in `process`, by address, and
    every function of its stripped code (no symbol covers it) that an FDE bounds — the
    functions the walk-up can hook there (callsite.Functions); not the object's entry point,
    and none that reads its own return address (return_slot.py: setjmp, vfork, getcontext,
    the i386 PIC thunks, nameless or not)."""
    if program.image is None:
        return []
    entry = program.image.entry
    functions = {}
    for symbol in program.image.symbols.functions():
        if symbol.size and symbol.addr != entry and not NOT_CALLED.match(symbol.name):
            functions.setdefault(symbol.addr, FunctionId(program.name, symbol.name, symbol.addr))
    for function in _stripped_functions(door, process, program):
        if function.entry != entry:
            functions.setdefault(function.entry, function)
    arch = door.arch(process).name
    read = functools.partial(door.read_memory, process)
    bounds = functools.partial(_bounds, program.image, Functions(door).table(program.image))
    return [functions[a] for a in sorted(functions) if not uses_return_address(read, a, arch, bounds)]


def _bounds(image, table, address: int) -> tuple[int, int] | None:
    """[start, end) of the function of `image` that holds `address`: its sized symbol, else
    its FDE."""
    symbol = image.symbols.function_at(address)
    if symbol is not None and symbol.size:
        return symbol.addr, symbol.addr + symbol.size
    return table.fde_range(address)


def _stripped_functions(door, process, program) -> list[FunctionId]:
    """The FDE-bounded functions of `program` that no symbol covers."""
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
    """Hooks every function of every object the run maps with an entry/exit pair for the run:
    give `provide` to the session's providers before it attaches."""

    def __init__(self, door, session):
        self.door, self.session = door, session
        self.callers = CallerList()
        self.activations = Activations()
        self.hooks = Hooks(session, door, on_identify=None, on_enter=self._entered,
                           on_exit=self._exited)
        self.probes: list[Probe] = []       # every probe made, of every object
        self._objects: set[bytes] = set()   # the objects (paths) probed: each once, for all

    def provide(self, process, mapped) -> list[Probe]:
        """The probes of an object `process` has just mapped (or had when it was attached),
        the first time the run maps that file; by file and offset, they apply to every process
        that maps it."""
        if mapped.path in self._objects or mapped.image is None:
            return []
        self._objects.add(mapped.path)
        probes = []
        for function in hookable_functions(self.door, process, mapped):
            entry = self.callers.entry(function)
            entry.state = MEASURING
            probes.append(self.hooks.make_probe(process, function, f"full:{function.module}:{function.name}",
                                                self._action(entry)))
        self.probes += probes
        return probes

    def _action(self, entry):
        return lambda ctx: self.hooks.hit(ctx, entry)

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
