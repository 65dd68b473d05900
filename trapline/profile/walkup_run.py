"""`trapline profile --walk-up`: the sampled run with seed 004's walk up the call graph, and
(`--compare-full`) the perturbation comparison the seed argues for — the same program run
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


def _session(kernel, probes=()):
    from instrumenter.tracing.records import Buffers
    from instrumenter.tracing.session import Session
    # The hooks' handlers are the consumers; the records the session buffers are not kept.
    return Session(kernel, list(probes), buffers=Buffers(capacity=4096, drain=lambda records: None))


def _strategies(probes) -> dict:
    chosen: Counter = Counter()
    for probe in probes:
        chosen.update(probe.chosen)
    return dict(sorted(chosen.items()))


def run_walkup(sandbox: Sandbox, argv: list[str], *, interval: int, options, mode: str = "stack",
               event: str = "insns") -> WalkUpRun:
    """The sampled run with the walk-up (`options`: WalkUpOptions)."""
    from instrumenter.profiler.hooks import LandingFixup
    from instrumenter.profiler.sampler import Sampler
    from instrumenter.profiler.walkup import WalkUp

    options.check()
    profile = Profile(interval=interval, mode=mode, event=event, command=list(argv))
    state: dict = {}

    def attach(kernel, process) -> None:
        door = kernel.debug
        session = _session(kernel)
        session.attach(process)
        walk = state["walk"] = WalkUp(door, session, options)
        state["door"], state["session"] = door, session

        def on_sample(sample) -> None:
            profile.add(sample)
            walk.sample(_process(door, sample.pid) or process, sample)

        Sampler(door, interval=interval, mode=mode, event=event, on_sample=on_sample,
                on_module=profile.add_module, fixup=LandingFixup(door, session.returns)).attach(process)

    result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach]).run(argv)
    profile.exit_code = result.exit_code
    walk = state["walk"]
    placed = [p for p in walk.hooks.placed]
    cost = RunCost(state["door"].instruction_count(), walk.hooks.executed,
                   len({p.spec.text for p in placed}), _strategies(placed), result.stdout,
                   result.exit_code)
    return WalkUpRun(profile, result, walk, cost)


def run_baseline(sandbox: Sandbox, argv: list[str]) -> RunCost:
    """The program with no tool at all (its instructions only)."""
    state: dict = {}

    def attach(kernel, process) -> None:
        state["door"] = kernel.debug
        _Counting(kernel.debug).attach(process)

    result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach], capture=True).run(argv)
    return RunCost(state["door"].instruction_count(), stdout=result.stdout, exit_code=result.exit_code)


def run_full(sandbox: Sandbox, argv: list[str]) -> tuple[RunCost, object]:
    """The program with every function hooked at entry and exit (full.py)."""
    from instrumenter.profiler.full import FullInstrumentation

    state: dict = {}

    def attach(kernel, process) -> None:
        door = kernel.debug
        session = _session(kernel)
        full = state["full"] = FullInstrumentation(door, session)
        probes = full.probes(process)
        session.probes.extend(probes)
        session.attach(process)
        state["door"], state["probes"] = door, probes

    result = dataclasses.replace(sandbox, tools=[*sandbox.tools, attach], capture=True).run(argv)
    full, probes = state["full"], state["probes"]
    return RunCost(state["door"].instruction_count(), full.hooks.executed, len(probes),
                   _strategies(probes), result.stdout, result.exit_code), full


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
