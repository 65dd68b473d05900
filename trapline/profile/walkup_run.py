"""`trapline profile --walk-up`: the sampled run with US 7,823,129's walk up the call graph, and
(`--compare-full`) the perturbation comparison the patent argues for — the same program run
without any tool, with every function hooked at entry and exit, and with the walk-up: hooks
executed and guest instructions added, each run deterministic, so the numbers are exact.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from ..sandbox import RunResult, Sandbox
from .model import Profile


@dataclass
class RunCost:
    """What a tool cost one run: guest instructions, hooks executed, their placements."""
    instructions: int
    hooks: int = 0
    functions: int = 0              # functions hooked at some time
    strategies: dict = dataclasses.field(default_factory=dict)    # strategy -> sites
    stdout: bytes | None = None
    exit_code: int | None = None
    objects: tuple = ()             # the objects (file names) whose functions it hooked


@dataclass
class Comparison:
    baseline: RunCost
    walkup: RunCost
    full: RunCost

    def added(self, run: RunCost) -> int:
        return run.instructions - self.baseline.instructions

    @property
    def hook_ratio(self) -> float:
        return self.walkup.hooks / self.full.hooks if self.full.hooks else 0.0

    @property
    def insn_ratio(self) -> float:
        full = self.added(self.full)
        return self.added(self.walkup) / full if full else 0.0


@dataclass
class WalkUpRun:
    profile: Profile
    result: RunResult
    walk: object                    # instrumenter.profiler.walkup.WalkUp
    cost: RunCost
    comparison: Comparison | None = None
    writer: object = None           # the open TraceWriter of --record, until finish_record


class _Counting:
    """The tool-less run's instruction count: the processes count on the run's clock."""

    def __init__(self, door):
        self.door = door

    def attach(self, process) -> None:
        self.door.subscribe(self, events=("fork", "exec"))
        self.door.count_instructions(process)

    def fork(self, parent, child) -> None:
        self.door.count_instructions(child)

    def exec(self, process, path, argv) -> None:
        self.door.count_instructions(process)


def _session(kernel, probes=(), strategy: str = "auto"):
    from instrumenter.probes.records import Buffers
    from instrumenter.tracing.session import Session
    # The hooks' handlers are the consumers; the records the session buffers are not kept.
    # `strategy`: the sandbox's (`trapline profile --strategy`: ours or a user's, as trace's).
    return Session(kernel, list(probes), buffers=Buffers(capacity=4096, drain=lambda records: None),
                   strategy=strategy)


def _strategies(probes) -> dict:
    chosen: Counter = Counter()
    for probe in probes:
        chosen.update(probe.chosen)
    return dict(sorted(chosen.items()))


def run_walkup(sandbox: Sandbox, argv: list[str], *, interval: int, options, mode: str = "stack",
               event: str = "insns", record: str | None = None, progress=None) -> WalkUpRun:
    """The sampled run with the walk-up (`options`: WalkUpOptions). With `record`, the trace is
    written as the program runs and `finish_record(run)` ends it (after --compare-full)."""
    from instrumenter.profiler.hooks import LandingFixup
    from instrumenter.profiler.sampler import Sampler
    from instrumenter.profiler.walkup import WalkUp

    from .lines import resolve_lines
    from .record import TraceWriter
    from .session import host_path
    from .sink import ProfileSink

    options.check()
    profile = Profile(interval=interval, mode=mode, event=event, command=list(argv))
    writer = TraceWriter(record, profile, walk_up=True) if record else None
    sink = ProfileSink(profile, writer, progress)
    state: dict = {}

    def attach(kernel, process) -> None:
        door = kernel.debug
        session = _session(kernel, strategy=sandbox.strategy)
        session.attach(process)
        walk = state["walk"] = WalkUp(door, session, options)
        state["door"], state["session"] = door, session

        def on_sample(sample) -> None:
            sink.sample(sample)
            walk.sample(_process(door, sample.pid) or process, sample)

        sampler = Sampler(door, interval=interval, mode=mode, event=event, on_sample=on_sample,
                          on_module=sink.module, fixup=LandingFixup(door, session.returns),
                          on_event=sink.event, batch=1)    # each sample at its tick: it may place hooks
        walk.functions.table = sampler.unwinder.table_for  # each object's CFI read once for both
        walk.unwinder = sampler.unwinder                   # past recursion: the samples' walk
        sampler.attach(process)
        if writer is not None:
            walk.on_step = writer.walkup_step
        sink.startup(door, process)

    try:
        result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach]).run(argv)
    except BaseException:
        if writer is not None:
            writer.close(profile)
        raise
    finally:
        if progress is not None:
            progress.done()
    profile.exit_code = result.exit_code
    resolve_lines(profile, lambda path: host_path(sandbox, path))
    walk = state["walk"]
    walk.finish()
    placed = [p for p in walk.hooks.placed]
    cost = RunCost(state["door"].instruction_count(), walk.hooks.executed,
                   len({p.spec.text for p in placed}), _strategies(placed), result.stdout,
                   result.exit_code, _objects(e for e in walk.callers if e.instrumented_at is not None))
    return WalkUpRun(profile, result, walk, cost, writer=writer)


def run_baseline(sandbox: Sandbox, argv: list[str]) -> RunCost:
    """The program with no tool at all (its instructions only)."""
    state: dict = {}

    def attach(kernel, process) -> None:
        state["door"] = kernel.debug
        _Counting(kernel.debug).attach(process)

    result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach], capture=True).run(argv)
    return RunCost(state["door"].instruction_count(), stdout=result.stdout, exit_code=result.exit_code)


def run_full(sandbox: Sandbox, argv: list[str]) -> tuple[RunCost, object]:
    """The program with every function hooked at entry and exit, its libraries' too (full.py)."""
    from instrumenter.profiler.full import FullInstrumentation

    state: dict = {}

    def attach(kernel, process) -> None:
        door = kernel.debug
        session = _session(kernel)
        full = state["full"] = FullInstrumentation(door, session)
        session.providers.append(full.provide)
        session.attach(process)
        state["door"] = door

    result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach], capture=True).run(argv)
    full = state["full"]
    probes = full.probes
    return RunCost(state["door"].instruction_count(), full.hooks.executed, len(probes),
                   _strategies(probes), result.stdout, result.exit_code, _objects(full.callers)), full


def _objects(entries) -> tuple:
    return tuple(sorted({entry.function.module for entry in entries}))


def compare(sandbox: Sandbox, argv: list[str], walkup: WalkUpRun) -> Comparison:
    """The tool-less and the fully instrumented runs next to the walk-up run."""
    baseline = run_baseline(sandbox, argv)
    full, _ = run_full(sandbox, argv)
    walkup.comparison = Comparison(baseline, walkup.cost, full)
    return walkup.comparison


def _process(door, pid: int):
    for process in door.live_processes():
        if process.pid == pid:
            return process
    return None
