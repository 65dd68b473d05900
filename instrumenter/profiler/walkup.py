"""The walk up the call graph (US 7,823,129's invention, [0166]-[0214]).

Sampling decides the hot spots (hotspot.py). Each gets an identifying hook at its entry; its
handler names the caller from the return address (callsite.py) and, once the hot function has
been entered `min_calls` times, that caller (every caller seen) is instrumented with entry/exit
hooks measuring the metric, and the identifying hook is removed ([0190]). A measured caller's
entry hooks learn its own callers the same way; when it has run for the period — `period`
invocations, or that many guest instructions or virtual nanoseconds inside it ([0192]) — the
walk goes up one level: its callers are instrumented and its hooks removed. It stops at `main`
(entered once, before any hook could see it), at a thread's start routine (its caller is the
runtime's start code) or after `max_levels` levels.

Recursion: a call whose return address is in the function itself names no new caller, and a
recursive hot spot (fib) may see nothing else — its outermost call was made before the hook
went in. The hook then walks the thread's stack (the sampler's unwinder, from the entry's
registers) to the first frame outside the recursion, the caller every stack sample of it shows,
and the walk goes up there.

Every place a walk goes no further up records why (CallerEntry.stops, STOP_REASONS): the report
says, for each chain, where and why it stopped — none ends silently.

Exclusive metrics, the user's choice (`exclusive`): with "exact", a measured function's callees
that the walk knows (the level it came from at least) keep an entry/exit pair timing them while
it is measured (hooks.py, kind "time"), so its exclusive metric is its inclusive less its timed
callees' over the same calls — at a price in hooks (several times the walk-up's own, still a
small part of full instrumentation's: bench/walkup.py). With "off", the default, no callee is
timed — the walk-up places exactly the identifying and measuring hooks of US 7,823,129 — and no
exclusive figure is kept (the metrics' exclusive fields are None): one that subtracted only the
callees measured at the same moment would mostly equal the inclusive, a wrong answer.

Stripped code is walked the same way: a function no symbol covers is the one its `.eh_frame`
FDE bounds (callsite.Functions), named "module+0xOFF" from its start and hooked like a named
one. A stripped `main` is named by what glibc's `_start` hands the C library (start_code.py),
so the walk stops there as at a named one; under other start code it is hooked as a caller,
and, entered only once before, never runs its hooks: the walk ends there all the same.
Only code in no function either way — no FDE, or one not starting at a called entry, like
ld.so's lazy-binding trampoline the PLT jumps to — is named for the report and never hooked.

All decisions are taken in virtual time, on the deterministic run, so the same run takes the
same steps. The timeline records every hook inserted and removed with the instruction clock.

Mixed in from their own files: the exclusive timing of measured levels' callees
(walkup_timing.py) and the report's queries on the finished walk (walkup_chains.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .callers import DONE, IDENTIFYING, IDLE, MEASURING, CallerList, FunctionId, Stop
from .callsite import Functions, identify_caller, place_name
from .hooks import Activations, Hooks, LandingFixup
from .hotspot import HotSpotDetector
from .sampler import CALLER_SAVED, WALK_REGISTERS
from .unwind import Unwinder
from .walkup_chains import WalkUpChains
from .walkup_timing import ExclusiveTiming

METRICS = ("insns", "calls", "time")
EXCLUSIVE = ("off", "exact")    # --exclusive: no exclusive figure, or an exact one (timing hooks)
TOP_NAMES = frozenset({"main"})
# The runtime's start code (musl, glibc, ld.so): a function called from here is the program's
# or a thread's first function, the top of every chain.
# Why a walk went no further up from a function (CallerEntry.stops; walkup.json's "stops").
STOP_REASONS = {
    "top": "it reached the top: main, or the start code that calls the first function",
    "max-levels": "--max-levels levels were instrumented",
    "ended-identifying": "the program ended before the hot spot's --min-calls calls",
    "ended-measuring": "the program ended before the level ran its period",
    "no-outside-caller": "only recursive calls were seen and no caller outside the recursion",
    "unnamed-caller": "a caller is in no function (no symbol, no FDE): it cannot be hooked",
    "not-hookable": "a caller could not be hooked (its process exited)",
    "already-walked": "its callers were walked up already by this walk",
}
START_NAMES = frozenset({"_start", "_start_c", "__libc_start_main", "libc_start_main_stage2",
                         "__libc_start_call_main", "start", "start_thread", "__clone", "clone",
                         "thread_start", "_dlstart", "_dlstart_c", "__dls2", "__dls3"})


@dataclass(frozen=True)
class WalkUpOptions:
    threshold: float = 10.0         # percent of a window's samples
    top: int = 3                    # hot spots per window when none reaches the threshold
    window: int = 50                # samples per decision
    min_calls: int = 1              # invocations the identifying hook waits for
    metric: str = "calls"           # what the period counts: calls, insns or time
    period: int = 50
    max_levels: int = 8
    exclusive: str = "off"          # "exact": time the measured levels' callees (EXCLUSIVE)

    def check(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric {self.metric!r}: expected one of {', '.join(METRICS)}")
        if self.exclusive not in EXCLUSIVE:
            raise ValueError(f"exclusive {self.exclusive!r}: expected one of {', '.join(EXCLUSIVE)}")
        for name in ("window", "min_calls", "period", "max_levels", "top"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1")


@dataclass(frozen=True)
class Step:
    """One line of the timeline."""
    ts: int                         # guest instructions on the run's clock
    action: str                     # "insert", "remove", "top", "stop", "join"
    kind: str                       # "identify", "measure", or why the walk stopped or joined
    function: FunctionId
    level: int
    hot_spot: FunctionId


@dataclass
class WalkUp(ExclusiveTiming, WalkUpChains):
    door: object
    session: object
    options: WalkUpOptions = field(default_factory=WalkUpOptions)

    def __post_init__(self):
        self.options.check()
        o = self.options
        self.callers = CallerList(exclusive=o.exclusive == "exact")
        self.detector = HotSpotDetector(o.threshold, o.top, o.window, exclude=START_NAMES)
        self.activations = Activations()
        self.functions = Functions(self.door)      # by symbol, or by .eh_frame FDE where stripped
        # The stack walked past recursion (the sampler's, with its tables, in a profile run).
        self.unwinder = Unwinder(self.door, LandingFixup(self.door, self.session.returns))
        self.timeline: list[Step] = []
        self._seen_in: dict[FunctionId, int] = {}   # function -> pid of the last sample in it
        self._untimed: list = []        # levels taken out whose timed callees wait for their exits
        # measured function -> the callees it keeps hooked (None once its first call placed them)
        self._timing: dict[FunctionId, list] = {}
        self.on_step = None             # on_step(Step): each step as it is taken (--record)
        self.tops: dict[FunctionId, list[FunctionId]] = {}     # hot spot -> where its walk ended
        self.joins: dict[FunctionId, FunctionId] = {}   # hot spot -> the walk it went on in
        self.join_points: dict[FunctionId, list] = {}   # hot spot -> [(function met, level)]
        self.hooks = Hooks(self.session, self.door, on_identify=self._identified,
                           on_enter=self._entered, on_exit=self._exited)

    # ---- sampling: the hot-spot decision ---------------------------------------------------
    def sample(self, process, sample) -> None:
        """One sample of `process` (the sampler's on_sample)."""
        function = self._leaf_function(process, sample)
        if function is not None:
            self._seen_in[function] = sample.pid
        for spot in self.detector.add(function):
            self._start(process, spot.function)

    def _process_holding(self, function: FunctionId, process):
        """A live process whose code at `function`'s entry is that function, where its hook is
        placed (the probe, by file and address, then goes in every process mapping the file):
        `process` if it is one, else the one last sampled in it, else any. A window mixes the
        samples of every process of the run (a pipeline's seq, sort and shell), and a caller
        list the calls seen in each: the process whose sample closed the window, or whose hook
        found the callers, may map another program at that address or the same library at
        another base; the one sampled in the function may have exec'd or exited."""
        if self.functions.at(process, function.entry) == function:
            return process
        live = self.door.live_processes()
        seen = self._seen_in.get(function)
        for candidate in [p for p in live if p.pid == seen] + live:
            if self.functions.at(candidate, function.entry) == function:
                return candidate
        return None

    def _leaf_function(self, process, sample) -> FunctionId | None:
        """The function the sample's PC is in: the symbolizer's name, or in code no symbol
        covers the function its FDE bounds (None in neither: it cannot be hooked)."""
        if not sample.frames:
            return None
        leaf = sample.frames[0]
        if leaf.function is not None:
            return FunctionId(leaf.module, leaf.function, leaf.address - leaf.offset)
        return self.functions.at(process, leaf.address)

    def _start(self, process, function: FunctionId) -> None:
        entry = self.callers.entry(function)
        if entry.state != IDLE:
            self._join(function, entry, 0)      # already met by another hot spot's walk
            return
        entry.hot_spot, entry.level = function, 0
        if function.name in TOP_NAMES:
            self._top(entry, function, "main is hot itself")
            self._stop(entry, "top", "main is hot itself", log=False)
            return
        if not self._insert(process, entry, IDENTIFYING, "identify"):
            self._stop(entry, "not-hookable", "it could not be hooked: its process exited", log=False)

    # ---- the hooks' handlers ---------------------------------------------------------------
    def _identified(self, ctx, entry) -> None:
        if entry.state != IDENTIFYING:
            return
        entry.hook_runs += 1
        entry.metric.invocations += 1
        self._learn_caller(ctx, entry)
        if entry.metric.invocations >= self.options.min_calls:
            self._walk_up(ctx.process, entry)

    def _entered(self, ctx, entry) -> None:
        measuring = entry.state == MEASURING
        if not measuring and not entry.timers:
            return
        entry.hook_runs += 1
        if measuring:
            entry.metric.invocations += 1
            if None not in self._timing.get(entry.function, (None,)):
                self._start_timing(ctx.process, entry)
            sp, chained, caller = self._learn_caller(ctx, entry)
        else:                       # timed for a measured caller: who called is all it needs
            sp, return_address, chained = self.hooks.entry_state(ctx)
            caller, _ = identify_caller(self.functions, ctx.process, return_address, entry.function)
        self.activations.enter(ctx.thread.tid, entry, sp, *self.hooks.clocks(ctx), chained,
                               counted=measuring, caller=caller)
        self.hooks.arm_exit(ctx, entry.function.entry)
        if measuring:
            self._check_period(ctx.process, entry)

    def _exited(self, ctx) -> None:
        self.hooks.count_exit()
        cpu = self.door.cpu(ctx.process)
        entry_sp = cpu.sp - cpu.arch.word            # the ret popped the return address
        done = self.activations.leave(ctx.thread.tid, entry_sp, *self.hooks.clocks(ctx))
        if done is not None:
            done.entry.hook_runs += 1
            self._check_period(ctx.process, done.entry)
            self._release_timed()

    def _learn_caller(self, ctx, entry) -> tuple[int, bool, FunctionId | None]:
        """Name the caller from the return address, and past a recursive call the first caller
        outside the recursion; (sp at entry, reached by a tail call from an instrumented
        function, the caller)."""
        sp, return_address, chained = self.hooks.entry_state(ctx)
        caller, why = identify_caller(self.functions, ctx.process, return_address, entry.function)
        if caller is not None:
            self.callers.saw_call(caller, entry.function, why)
            if caller == entry.function:
                self._learn_outside_caller(ctx, entry)
        else:                       # in no function symbol or FDE: named for the report, never hooked
            where = place_name(self.door, ctx.process, return_address)
            entry.unnamed[where] = entry.unnamed.get(where, 0) + 1
        return sp, chained, caller

    def _learn_outside_caller(self, ctx, entry) -> None:
        outside, why = self._outside_caller(ctx, entry.function)
        if outside is not None:
            self.callers.saw_outside(outside, entry.function)
        else:
            entry.recursion[why] = entry.recursion.get(why, 0) + 1

    def _outside_caller(self, ctx, function: FunctionId) -> tuple[FunctionId | None, str | None]:
        """(the function of the first frame above `function`'s recursion on this thread's
        stack, or None and why not). The hook runs for the entry's first instruction: the walk
        starts there, with the registers of the call (the psABI's state at a function's entry)."""
        cpu = self.door.cpu(ctx.process)
        names = WALK_REGISTERS[cpu.arch.bits] + CALLER_SAVED[cpu.arch.bits]
        registers = dict(zip(names, cpu.register_batch(names).read()))
        registers[names[0]] = function.entry                # names[0] is the IP, [1] the SP
        stack = self.unwinder.unwind(ctx.process, registers, tid=ctx.thread.tid)
        for address in stack.frames[1:]:
            caller = self.functions.at(ctx.process, address - 1)    # a call may end its function
            if caller is None:
                return None, f"the frame at {place_name(self.door, ctx.process, address)} is in no function"
            if caller != function:
                return caller, None
        return None, f"the stack {stack.truncated}" if stack.truncated else "the stack ends in the recursion"

    def _check_period(self, process, entry) -> None:
        if entry.state == MEASURING and entry.metric.value(self.options.metric) >= self.options.period:
            self._walk_up(process, entry)

    # ---- one level up ----------------------------------------------------------------------
    def _walk_up(self, process, entry) -> None:
        """Instrument `entry`'s callers (one level up), then take its own hooks out."""
        if entry.level >= self.options.max_levels:
            self._stop(entry, "max-levels", f"--max-levels {self.options.max_levels} reached")
        else:
            callers = self.callers.walk_callers(entry.function)
            for caller in callers:
                self._climb(process, entry, caller)
            self._stop_at_unhookable(entry, callers)
        self._remove(entry)

    def _stop_at_unhookable(self, entry, callers: list) -> None:
        """The reasons a walk-up leaves callers behind that it cannot instrument."""
        if entry.unnamed:
            places = ", ".join(entry.unnamed)
            self._stop(entry, "unnamed-caller", f"called from {places}, in no function (no symbol, no FDE)")
        if not callers and entry.function in entry.callers:
            calls = entry.callers[entry.function]
            whys = "; ".join(entry.recursion) or "no recursive call was walked"
            self._stop(entry, "no-outside-caller",
                       f"its {calls} calls seen were recursive and no caller outside the recursion was found: {whys}")

    def _climb(self, process, entry, caller: FunctionId) -> None:
        if caller.name in START_NAMES:
            self._top(entry, entry.function, "called by the start code")
            self._stop(entry, "top", f"called by the start code ({caller.name})", log=False)
        elif caller.name in TOP_NAMES:
            self._top(entry, caller, "main")
            self._stop(entry, "top", f"called by {caller.name}, the top", log=False)
        else:
            target = self.callers.entry(caller)
            if target.state == IDLE:
                target.level, target.hot_spot = entry.level + 1, entry.hot_spot
                if self._insert(process, target, MEASURING, "measure"):
                    entry.went_on += 1
                else:
                    self._stop(entry, "not-hookable", f"its caller {caller.name} could not be hooked: "
                               "its process exited", log=False)
            elif target.hot_spot != entry.hot_spot:
                self._join(entry.hot_spot, target, entry.level + 1)
                entry.went_on += 1
            elif target.state == MEASURING:
                entry.went_on += 1          # the walk goes on there when that level is done
            else:
                self._stop(entry, "already-walked", f"its caller {caller.name} was walked already "
                           f"(level {target.level})")

    def _stop(self, entry, reason: str, why: str, *, log: bool = True) -> None:
        """The walk goes no further up from `entry` that way: say why (in the timeline too,
        unless a step of its own says so already)."""
        stop = Stop(reason, why)
        if stop not in entry.stops:
            entry.stops.append(stop)
        if log:
            self._step("stop", reason, entry)

    def _top(self, entry, function: FunctionId, why: str) -> None:
        tops = self.tops.setdefault(entry.hot_spot, [])
        if function not in tops:
            tops.append(function)
        level = entry.level if function == entry.function else entry.level + 1
        self._log(Step(self._now(), "top", why, function, level, entry.hot_spot))

    def _join(self, hot_spot: FunctionId, target, level: int) -> None:
        """`hot_spot`'s walk reached a function another hot spot's walk has: it goes on there."""
        self.joins.setdefault(hot_spot, target.hot_spot)
        self.join_points.setdefault(hot_spot, []).append((target.function, level))
        self._log(Step(self._now(), "join", f"walk of {target.hot_spot.name}",
                       target.function, level, hot_spot))

    # ---- hooks in and out --------------------------------------------------------------------
    def _insert(self, process, entry, state: str, kind: str) -> bool:
        if not self.hooks.hooked(entry):
            holder = self._process_holding(entry.function, process)
            if holder is None:
                self._step("stop", "its process exited", entry)
                return False
            self.hooks.insert(holder, entry, kind)
        entry.state = state
        entry.instrumented_at = self._now()
        self._step("insert", kind, entry)
        if state == MEASURING:
            entry.timed = self._callees_to_time(entry)
            self._timing[entry.function] = []
            for callee in entry.timed:          # hooked now (the level below): kept as it is
                if self.hooks.hooked(self.callers.entry(callee)):
                    self._time(process, entry, self.callers.entry(callee))
        return True

    def _remove(self, entry) -> None:
        kind = "identify" if entry.state == IDENTIFYING else "measure"
        measured = entry.state == MEASURING
        entry.state = DONE
        entry.removed_at = self._now()
        self._step("remove", kind, entry)
        if entry.timers:            # a measured caller times it: its probe stays, in that role
            self._step("insert", "time", entry)
        else:
            self.hooks.remove(entry)
        if measured:
            self._untimed.append(entry)
            self._release_timed()

    def _step(self, action: str, kind: str, entry) -> None:
        self._log(Step(self._now(), action, kind, entry.function, entry.level, entry.hot_spot))

    def _log(self, step: Step) -> None:
        self.timeline.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def _now(self) -> int:
        return self.door.instruction_count()

    # ---- the end of the run ------------------------------------------------------------------
    def finish(self) -> None:
        """The program ended: the levels still instrumented say that the run ended their walk."""
        for entry in self.callers:
            if entry.state == IDENTIFYING:
                self._stop(entry, "ended-identifying", f"the program ended after {entry.metric.invocations} "
                           f"of the {self.options.min_calls} calls --min-calls waits for")
            elif entry.state == MEASURING:
                o = self.options
                self._stop(entry, "ended-measuring", f"the program ended after {entry.metric.value(o.metric)} "
                           f"of its period's {o.period} ({o.metric})")
