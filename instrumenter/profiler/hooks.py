"""The walk-up's hooks: patched into functions and taken out again while the program runs, through
the tracing session's probes (instrumenter/tracing/session.py add_probe/remove_probe, placed at a
safe point by dynamic.py with the cheapest strategy that accepts the site: the registry's `auto`
order, a jump first).

Two kinds, as seed 004 has them:
  * the identifying hook at a hot spot's entry ([0178]): its handler reads the return address at
    [sp] and names the caller (callsite.py);
  * a caller's entry/exit pair measuring a metric ([0190]): the entry hook counts the invocation,
    learns the caller from [sp] and arms the exit the way uretprobes do — the return address is
    swapped for the session's return landing (tracing/uretprobes.py), which pairs the exit with
    its entry by stack pointer, per thread, and recognises frames a longjmp abandoned.

The exit probe stays enabled for the whole run, so an activation that was entered while the
function was instrumented is closed (and counted) even when the entry hook is taken out before it
returns: no exit without its entry, no entry left without its exit, and no thread returns into a
removed trampoline (the landing stays mapped for good).

Activations: a per-thread shadow of the instrumented activations (entry sp, the clocks at entry,
what nested instrumented activations took). Inclusive sums count only the outermost activation
of a function on a thread (recursion is not counted twice); exclusive ones subtract the nested
instrumented activations — only what is instrumented at the same time can be subtracted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..tracing.probes import UPROBE, URETPROBE, Probe, ProbeSpec
from .callers import CallerEntry


@dataclass
class Open:
    entry: CallerEntry
    sp: int
    insns: int
    time: int
    child_insns: int = 0
    child_time: int = 0


@dataclass
class Activations:
    by_tid: dict = field(default_factory=dict)      # tid -> [Open], innermost last

    def enter(self, tid: int, entry: CallerEntry, sp: int, insns: int, time: int,
              chained: bool = False) -> None:
        """An instrumented activation begins with its return address at `sp`; `chained`: that
        slot holds the return landing already (a tail call from an instrumented function)."""
        stack = self.by_tid.setdefault(tid, [])
        # Left by a longjmp: dead (uretprobes.py on_entry); a tail call's caller stays.
        while stack and (stack[-1].sp < sp or (stack[-1].sp == sp and not chained)):
            stack.pop().entry.metric.abandoned += 1
        stack.append(Open(entry, sp, insns, time))

    def leave(self, tid: int, sp: int, insns: int, time: int) -> Open | None:
        """The activation entered with `sp` returned: close it, the tail-calling ones that
        return with it, and the deeper ones a longjmp abandoned; returns the outermost closed,
        or None when no open activation has that sp (entered before the hooks)."""
        stack = self.by_tid.get(tid) or []
        if not any(o.sp == sp for o in stack):
            return None
        while stack[-1].sp != sp:
            stack.pop().entry.metric.abandoned += 1
        done = None
        while stack and stack[-1].sp == sp:
            done = stack.pop()
            self._close(stack, done, insns, time)
        return done

    @staticmethod
    def _close(stack: list, done: Open, insns: int, time: int) -> None:
        inclusive_insns, inclusive_time = insns - done.insns, time - done.time
        metric = done.entry.metric
        metric.returns += 1
        metric.insns_exclusive += inclusive_insns - done.child_insns
        metric.time_exclusive += inclusive_time - done.child_time
        if not any(o.entry is done.entry for o in stack):     # the outermost: recursion once
            metric.insns_inclusive += inclusive_insns
            metric.time_inclusive += inclusive_time
        if stack:
            stack[-1].child_insns += inclusive_insns
            stack[-1].child_time += inclusive_time

    def still_open(self) -> list[Open]:
        return [o for tid in sorted(self.by_tid) for o in self.by_tid[tid]]


class Hooks:
    """Places and removes the walk-up's probes in `session`; `on_identify(ctx, entry)`,
    `on_enter(ctx, entry)` and `on_exit(ctx)` are the walk-up's handlers."""

    def __init__(self, session, door, *, on_identify, on_enter, on_exit):
        self.session, self.door = session, door
        self.on_identify, self.on_enter = on_identify, on_enter
        self.exit_probe = Probe(ProbeSpec("walkup:exit", URETPROBE), action=on_exit, nargs=0,
                                closes_chains=True)
        self.executed = 0               # hook runs: identifying, entry and exit hooks
        self.probes: dict = {}          # FunctionId -> the Probe placed there now
        self.placed: list[Probe] = []   # every probe inserted, in order (removed ones too)

    def insert(self, process, entry: CallerEntry, kind: str) -> Probe:
        """An identifying ("identify") or entry/exit ("measure") hook at `entry`'s function."""
        handler = self.identify if kind == "identify" else self.enter
        probe = self.make_probe(process, entry.function, f"walkup:{kind}:{entry.function.name}",
                                lambda ctx: handler(ctx, entry))
        self.probes[entry.function] = probe
        self.placed.append(probe)
        self.session.add_probe(probe)
        return probe

    def make_probe(self, process, function, text: str, action) -> Probe:
        """An entry probe at `function` in the object of `process` that holds it, by address
        (a local symbol's name may not be unique)."""
        mapped = self.object_of(process, function.entry)
        bias = mapped.image.load_bias if mapped.image is not None else 0
        spec = ProbeSpec(text, UPROBE, binary=mapped.path.decode(errors="replace"),
                         address=function.entry - bias)
        return Probe(spec, action=action, nargs=0)

    def remove(self, entry: CallerEntry) -> None:
        probe = self.probes.pop(entry.function)
        self.session.remove_probe(probe)

    def entry_state(self, ctx) -> tuple[int, int, bool]:
        """(sp, the real return address, chained) at a hooked function's first instruction:
        a return slot that holds the landing already (a tail call from a function whose exit
        is armed) returns where the pending frame at that slot does."""
        from .callsite import return_address_at_entry
        sp, address = return_address_at_entry(self.door, ctx.process)
        returns = self.session.returns
        if not returns.is_landing(ctx.process, address):
            return sp, address, False
        for pending in returns.shadow.get(ctx.thread.tid) or ():
            if pending.sp == sp:
                return sp, pending.return_address, True
        return sp, address, True

    def clocks(self, ctx) -> tuple[int, int]:
        """(instructions the hooked thread ran itself, the run's virtual time in ns) now: the
        metrics' clocks (kernel_model/cpu_time.py), exact at the hook."""
        return self.door.thread_instructions(ctx.thread), self.door.virtual_time_ns()

    def arm_exit(self, ctx, function_entry: int) -> None:
        """Swap the return address for the landing (the uretprobe's entry half)."""
        self.session.returns.on_entry(ctx.thread, self.exit_probe, function_entry)

    def identify(self, ctx, entry: CallerEntry) -> None:
        self.executed += 1
        self.on_identify(ctx, entry)

    def enter(self, ctx, entry: CallerEntry) -> None:
        self.executed += 1
        self.on_enter(ctx, entry)

    def count_exit(self) -> None:
        self.executed += 1

    def object_of(self, process, address: int):
        from .callsite import object_at
        mapped = object_at(self.door.images(process), address)
        if mapped is None:
            raise LookupError(f"{address:#x}: in no object of pid {process.pid}")
        return mapped


class LandingFixup:
    """For the unwinder: a return address the hooks swapped for the return landing is the real
    one again — the pending return whose slot lies just below the caller's stack pointer."""

    def __init__(self, door, returns):
        self.door, self.returns = door, returns

    def __call__(self, process, tid: int, address: int, sp: int) -> int:
        if not self.returns.is_landing(process, address):
            return address
        slot = sp - self.door.arch(process).word
        for pending in self.returns.shadow.get(tid) or ():
            if pending.sp == slot:
                return pending.return_address
        return address
