"""The walk-up's hooks: patched into functions and taken out again while the program runs, through
the tracing session's probes (instrumenter/tracing/session.py add_probe/remove_probe, placed at a
safe point by dynamic.py with the cheapest strategy that accepts the site: the registry's `auto`
order, a jump first).

Two kinds, as US 7,823,129 has them:
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

A third kind, "time", keeps a callee's entry/exit pair in while a function that calls it is
measured, so that the caller's exclusive metric is exact over its own calls: when the walk
goes up from a level, the callees it knows the new level calls (the level below at least) stay
hooked — measuring nothing of their own — until that level is taken out. They are placed only
with the walk-up's `--exclusive exact` (walkup.py): with `off`, the default, no callee is timed
and the metrics have no exclusive figure (None), as a level's callees are mostly not hooked.

Activations: a per-thread shadow of the hooked activations (entry sp, the clocks at entry, the
caller its return address names, what its timed callees took). Inclusive sums count only the
outermost activation of a function on a thread (recursion is not counted twice). Exclusive ones
are each measured activation's inclusive less the inclusive of the activations it called
directly — itself (recursion) and its timed callees — so a function's exclusive sum is the time
in its own code and in the callees it was not told of; over a call tree whose functions are all
measured and timed, the exclusive sums add up to the root's inclusive (tests/property).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..probes.definitions import UPROBE, URETPROBE, Probe, ProbeSpec
from .callers import IDENTIFYING, CallerEntry


# The caller of an activation in a run where every function is hooked (full.py): whatever
# activation encloses it is the one that called it, and it is charged to that one.
ENCLOSING = "enclosing"


@dataclass
class Open:
    entry: CallerEntry
    sp: int
    insns: int
    time: int
    counted: bool = True            # a measured activation (False: timed for its caller only)
    caller: object = ENCLOSING      # the FunctionId its return address is in
    child_insns: int = 0
    child_time: int = 0


@dataclass
class Activations:
    by_tid: dict = field(default_factory=dict)      # tid -> [Open], innermost last

    def enter(self, tid: int, entry: CallerEntry, sp: int, insns: int, time: int,
              chained: bool = False, *, counted: bool = True, caller=ENCLOSING) -> None:
        """A hooked activation begins with its return address at `sp`; `chained`: that slot
        holds the return landing already (a tail call from an instrumented function);
        `counted`: it is measured (else only timed for its caller's exclusive metric)."""
        stack = self.by_tid.setdefault(tid, [])
        # Left by a longjmp: dead (uretprobes.py on_entry); a tail call's caller stays.
        while stack and (stack[-1].sp < sp or (stack[-1].sp == sp and not chained)):
            self._abandon(stack.pop())
        stack.append(Open(entry, sp, insns, time, counted, caller))

    def leave(self, tid: int, sp: int, insns: int, time: int) -> Open | None:
        """The activation entered with `sp` returned: close it, the tail-calling ones that
        return with it, and the deeper ones a longjmp abandoned; returns the outermost closed,
        or None when no open activation has that sp (entered before the hooks)."""
        stack = self.by_tid.get(tid) or []
        if not any(o.sp == sp for o in stack):
            return None
        while stack[-1].sp != sp:
            self._abandon(stack.pop())
        done = None
        while stack and stack[-1].sp == sp:
            done = stack.pop()
            self._close(stack, done, insns, time)
        return done

    @staticmethod
    def _abandon(gone: Open) -> None:
        if gone.counted:
            gone.entry.metric.abandoned += 1

    @staticmethod
    def _close(stack: list, done: Open, insns: int, time: int) -> None:
        inclusive_insns, inclusive_time = insns - done.insns, time - done.time
        if done.counted:
            metric = done.entry.metric
            metric.returns += 1
            if metric.insns_exclusive is not None:      # None: no exclusive figure is kept
                metric.insns_exclusive += inclusive_insns - done.child_insns
                metric.time_exclusive += inclusive_time - done.child_time
            if not any(o.counted and o.entry is done.entry for o in stack):   # recursion once
                metric.insns_inclusive += inclusive_insns
                metric.time_inclusive += inclusive_time
        # Its caller's activation excludes it when the caller called it directly and times it
        # (a function reached by a tail call names its caller's caller, and stays in the
        # exclusive time of the function that jumped to it, whose frame it took over).
        if stack and (done.caller == ENCLOSING or stack[-1].entry.function == done.caller and (
                done.entry.function == done.caller or done.entry.function in stack[-1].entry.timed)):
            stack[-1].child_insns += inclusive_insns
            stack[-1].child_time += inclusive_time

    def still_open(self) -> list[Open]:
        """The measured activations not closed yet (the timed ones measure nothing)."""
        return [o for tid in sorted(self.by_tid) for o in self.by_tid[tid] if o.counted]


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
        """An identifying ("identify"), or entry/exit ("measure", "time") hook at `entry`'s
        function."""
        probe = self.make_probe(process, entry.function, f"walkup:{kind}:{entry.function.name}",
                                lambda ctx: self.hit(ctx, entry))
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

    def hooked(self, entry: CallerEntry) -> bool:
        return entry.function in self.probes

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
        metrics' clocks (kernel_model/time/cpu_time.py), exact at the hook."""
        return self.door.thread_instructions(ctx.thread), self.door.virtual_time_ns()

    def arm_exit(self, ctx, function_entry: int) -> None:
        """Swap the return address for the landing (the uretprobe's entry half)."""
        self.session.returns.on_entry(ctx.thread, self.exit_probe, function_entry)

    def hit(self, ctx, entry: CallerEntry) -> None:
        """A function's one probe serves each role it has in turn — identifying, measuring,
        timing for a measured caller — so a role changes without re-patching the entry."""
        self.executed += 1
        if entry.state == IDENTIFYING:
            self.on_identify(ctx, entry)
        else:
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
