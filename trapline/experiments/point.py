"""One sweep point, run in a worker: its tree written into the worker's cache (inputs.py), the
guest run in-process through the library API (trapline/sandbox.py, as `trapline trace` does),
and its row of metrics returned with the guest paths of the objects it loaded.

A run that does not finish — a deadlock, the instruction budget spent, a runaway fork, a probe
that cannot be placed — is a result like any other: its row says which (outcome, error) and
carries trapline's exit status for it, so a sweep over a tool that deadlocks the guest reports
the deadlock in its table instead of hanging or failing the whole sweep.
"""
from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass

from .inputs import materialize
from .metrics import format_float


@dataclass
class PointTask:
    """What a worker receives with the tree's bytes (run_point's `blobs`): the plan and the
    tree's entries (inputs.py)."""
    plan: object                 # plan.PointPlan
    entries: list
    handler_entries: list = None  # the handler's tree (handler_input.py), when it has one


@dataclass
class PointResult:
    index: int
    row: dict
    loaded: list[str]            # guest paths of the programs and objects the guest mapped
    records: str = ""            # the probe records as JSON Lines, when the spec keeps them
    opened: list[str] = None     # guest paths of the files the guest opened (the door's)


_ONE_AT_A_TIME = threading.Lock()        # a guest run owns the process (execute.py)


def run_point(task: PointTask, blobs: dict, handler_blobs: dict | None = None) -> PointResult:
    """`blobs`: sha256 -> bytes of the tree's files, `handler_blobs` those of the handler's
    tree (execute.py ships them)."""
    with _ONE_AT_A_TIME:
        return _run_point(task, blobs, handler_blobs)


def _run_point(task: PointTask, blobs: dict, handler_blobs: dict | None) -> PointResult:
    plan = task.plan
    root = materialize(task.entries, blobs, plan.tree)
    handler = None
    if plan.handler is not None:
        from .handler_input import load_shipped
        handler = load_shipped(plan.handler, task.handler_entries, handler_blobs)
    wall, cpu = time.perf_counter(), time.process_time()
    if plan.walkup is not None:
        from .walkup_point import walkup_row
        return _measured_point(walkup_row, plan, root, wall, cpu)
    if plan.profile is not None:
        from .profile_point import profile_row
        return _measured_point(profile_row, plan, root, wall, cpu)
    outcome = _run(plan, root, probes=True, handler=handler)
    probed_cpu = time.process_time() - cpu
    row = _metrics(plan, outcome)
    opened = set(outcome.opened)
    if plan.baseline and outcome.error is None:       # an unfinished run adds nothing to compare
        base = _run(plan, root, probes=False)
        opened.update(base.opened)
        row["base_insns"] = base.insns
        row["added_insns"] = outcome.insns - base.insns
        row["added_insns_per_hit"] = format_float(row["added_insns"] / max(1, outcome.total_hits))
        row["stdout_as_unprobed"] = (outcome.result.stdout == base.result.stdout
                                     if base.result else False)
    row = {k: v for k, v in row.items() if k in plan.collect}
    row["host_wall_s"] = format_float(time.perf_counter() - wall)
    row["host_cpu_s"] = format_float(time.process_time() - cpu)
    if plan.probes or plan.cold_probes:
        row["host_hits_per_cpu_s"] = format_float(outcome.total_hits / probed_cpu if probed_cpu else 0.0)
    return PointResult(plan.index, row, sorted(outcome.loaded), "".join(outcome.records),
                       sorted(opened))


def _measured_point(measure, plan, root, wall: float, cpu: float) -> PointResult:
    """A point that runs the program its own way (walkup_point.py, profile_point.py)."""
    opened = _Opened()
    try:
        row = measure(plan, _sandbox(plan, root, tools=[opened.watch]))
    except Exception as e:          # noqa: BLE001 -- a point's failure is its result
        from ..exit_status import status_for
        row = {"outcome": _kind(e), "error": _first_line(e), "exit_code": status_for(e)}
    host = {k: v for k, v in row.items() if k.startswith("host_")}
    row = {k: v for k, v in row.items() if k in plan.collect}
    row["host_wall_s"] = format_float(time.perf_counter() - wall)
    row["host_cpu_s"] = format_float(time.process_time() - cpu)
    row.update(host)
    return PointResult(plan.index, row, [plan.program], opened=opened.sorted())


def _sandbox(plan, root, **options):
    from ..sandbox import Sandbox
    return Sandbox(rootfs=str(root), cwd=plan.cwd, env=plan.env, clear_env=plan.clear_env,
                   seed=plan.seed, stdin=plan.stdin, max_insns=plan.max_insns,
                   exact_quantum=plan.exact_quantum,
                   **({"quantum": plan.quantum} if plan.quantum else {}), **options)


@dataclass
class _Outcome:
    result: object = None        # sandbox.RunResult, None when the run raised
    error: BaseException | None = None
    insns: int = 0
    probes: list = None
    cold: list = None
    pid_hits: Counter = None
    records: list = None         # JSON Lines, kept when plan.records
    held: int = 0
    detached_at: int | None = None
    loaded: set = None
    traps: dict = None           # the door's tool traps taken, per kind
    opened: list = None          # the files the guest opened (the door's global paths)

    @property
    def total_hits(self) -> int:
        return sum(p.hits for p in self.probes + self.cold)


class _Loaded:
    """The door's exec and image_mapped events (kernel_model/debug.py): the files the guest ran."""

    def __init__(self):
        self.paths: set[str] = set()

    def exec(self, process, path: bytes, argv) -> None:
        self.paths.add(path.decode(errors="replace"))

    def image_mapped(self, process, mapped) -> None:
        self.paths.add(mapped.path.decode(errors="replace"))


class _Opened:
    """The files a run's guests opened, from the door (kernel_model/debug/opened_files.py):
    a tool that asks at the start of each run (the runs of one point add up)."""

    def __init__(self):
        self.doors = []

    def watch(self, kernel, process) -> None:
        kernel.debug.watch_opened_files()
        self.doors.append(kernel.debug)

    def sorted(self) -> list[str]:
        return sorted({p.decode(errors="replace") for door in self.doors for p in door.opened_files()})


def _run(plan, root, *, probes: bool, handler=None) -> _Outcome:
    from instrumenter.probes.definitions import UPROBE, Probe

    from ..probespec import parse_probe_spec
    from ..tracing import format_jsonl
    out = _Outcome(probes=[], cold=[], pid_hits=Counter(), loaded=set(), records=[])
    if probes:
        native = plan.native or None
        # the handler goes with the uprobes, as trace gives it (trapline/cli/trace.py)
        specs = [parse_probe_spec(p) for p in plan.probes]
        window = {"enable_at": plan.enable_at, "disable_at": plan.disable_at or None}
        out.probes = [Probe(s, nargs=0, native=native, handler=handler if s.kind == UPROBE else None,
                            **window) for s in specs]
        out.cold = [Probe(parse_probe_spec(p), nargs=0, native=native, handler=handler, **window)
                    for p in plan.cold_probes]
    loaded = _Loaded()
    doors = []

    def watch(kernel, process):
        doors.append(kernel.debug)
        kernel.debug.watch_opened_files()
        loaded.paths.add(plan.program)          # the path it was started by (a link, maybe)
        kernel.debug.subscribe(loaded, events=("exec", "image_mapped"))
        loaded.paths.update(m.path.decode(errors="replace") for m in kernel.debug.images(process))

    sessions = []

    detach = None
    if probes and (plan.detach_after or plan.detach_on):
        from ..cli.detach import detach_starter
        detach = detach_starter(plan.detach_after or None, plan.detach_on or None, False)

    def keep_session(kernel, process, session):
        if session is not None:
            sessions.append(session)
        if detach is not None:
            detach(kernel, process, session)

    def count(records):
        for record in records:
            out.pid_hits[record.pid] += 1
            if plan.records and probes:
                out.records.append(format_jsonl(record) + "\n")

    sandbox = _sandbox(plan, root, probes=out.probes + out.cold, strategy=plan.strategy,
                       sink=count, children=plan.children, backpatch=plan.backpatch,
                       tools=[watch], on_start=keep_session)
    try:
        out.result = sandbox.run([plan.program, *plan.argv])
    except Exception as e:          # noqa: BLE001 -- a point's failure is its result (docstring)
        out.error = e
    out.traps = doors[0].tool_traps_taken() if doors else {}
    out.opened = [p.decode(errors="replace") for p in doors[0].opened_files()] if doors else []
    if sessions:                    # read after the run: the count grows while it runs
        strategy = sessions[0].strategies.get(plan.strategy)
        out.held = getattr(strategy, "held_thread_insns", 0)
        detacher = sessions[0].detacher
        out.detached_at = detacher.report.done_at if detacher and detacher.report else None
    out.insns = out.result.insns_charged if out.result else 0
    out.loaded = loaded.paths
    return out


def _hooks_executed(probes: list) -> int:
    """A uprobe's hook runs at each hit (in Python on a trap, or natively in the guest: a hit
    either way); a uretprobe's hit took two, the entry hook that armed the return and the
    landing's."""
    from instrumenter.probes.definitions import URETPROBE
    return sum(p.hits * (2 if p.spec.kind == URETPROBE else 1) for p in probes)


def _metrics(plan, out: _Outcome) -> dict:
    from ..exit_status import status_for
    result = out.result
    stdout = result.stdout if result else b""
    stderr = result.stderr if result else b""
    row = {"outcome": "ok" if out.error is None else _kind(out.error),
           "error": _first_line(out.error),
           "exit_code": result.exit_code if result else status_for(out.error),
           "guest_insns": out.insns,
           "stdout_sha256": hashlib.sha256(stdout).hexdigest(),
           "stderr_sha256": hashlib.sha256(stderr).hexdigest(),
           "stdout_bytes": len(stdout)}
    if plan.expect_stdout is not None:
        row["stdout_matches"] = stdout == plan.expect_stdout.encode()
    hits = out.total_hits
    row["hits"] = hits
    row["hits_by_probe"] = " ".join(f"p{i}={p.hits}" for i, p in enumerate(out.probes))
    row["cold_hits"] = sum(p.hits for p in out.cold)
    row["pid_hits"] = " ".join(f"{pid}={n}" for pid, n in sorted(out.pid_hits.items()))
    placed = Counter()
    for probe in out.probes + out.cold:
        placed.update(probe.chosen)
    row["placed"] = " ".join(f"{name}={n}" for name, n in sorted(placed.items()))
    refusals = result.unattached if result else []
    row["refused"] = len(refusals)
    row["refusals"] = " | ".join(refusals)
    row["held_thread_insns"] = out.held
    row["traps_taken"] = sum(out.traps.values())
    row["traps_by_kind"] = " ".join(f"{kind}={n}" for kind, n in out.traps.items())
    row["hooks_executed"] = _hooks_executed(out.probes + out.cold)
    if plan.detach_after or plan.detach_on:
        row["detached_at"] = out.detached_at if out.detached_at is not None else ""
    if plan.expected_hits is not None:
        row["expected_hits"] = plan.expected_hits
        row["lost_hits"] = plan.expected_hits - hits
    return row


def _first_line(error: BaseException | None) -> str:
    if error is None:
        return ""
    lines = str(error).splitlines()
    return lines[0] if lines else type(error).__name__


def _kind(error: BaseException) -> str:
    from kernel_model.kernel import Deadlock, InstructionBudgetExceeded
    from kernel_model.task_limit import TaskLimitRunaway
    kinds = ((Deadlock, "deadlock"), (InstructionBudgetExceeded, "max-insns"),
             (TaskLimitRunaway, "runaway"))
    for cls, name in kinds:
        if isinstance(error, cls):
            return name
    from ..exit_status import INTERNAL, status_for
    return "internal-error" if status_for(error) == INTERNAL else "error"
