"""`trapline explain --technique walkup`: US 7,823,129's walk up the call graph
(instrumenter/profiler/walkup.py), as `trapline profile --walk-up` runs it, on
samples/bin/ARCH/callchain 20 (main -> outer -> middle -> inner -> leaf, leaf the hot spot).

Samples every INTERVAL guest instructions decide the hot spots per window of WINDOW samples
(hotspot.py: a share of the window at or above the threshold); each gets an identifying hook at
its entry that reads the return address and names the caller (callsite.py); the caller gets
entry/exit hooks measuring PERIOD calls, then the walk goes up a level: its callers are
instrumented and its own hooks removed, up to main or the end of the run. The timeline is the
walk's own (WalkUp.timeline, on the run's instruction clock), the callers each level saw are
its CallerEntry's, and every place a walk stopped says why. The same inputs give the same
output on every run.
"""
from instrumenter.profiler.walkup import STOP_REASONS, WalkUpOptions

from . import document as d
from .guest import sample_sandbox

ROUNDS, INTERVAL, WINDOW, PERIOD, THRESHOLD = 20, 500, 20, 5, 30.0
ACTIONS = {("insert", "identify"): "identifying hook inserted at the entry of {f} (the hot spot "
                                   "itself): it will read the return address of each call",
           ("remove", "identify"): "identifying hook of {f} removed: its caller is known",
           ("insert", "measure"): "entry/exit hooks inserted in {f} (level {level}): measuring "
                                  "its calls, learning its callers from the return address",
           ("remove", "measure"): "hooks of {f} (level {level}) removed: its period is done, the "
                                  "walk went up"}


def explain_walkup(arch: str = "x86_64") -> dict:
    from ..profile.walkup_run import run_walkup
    sandbox, _ = sample_sandbox(arch, capture=True)
    options = WalkUpOptions(window=WINDOW, period=PERIOD, threshold=THRESHOLD)
    run = run_walkup(sandbox, ["/callchain", str(ROUNDS)], interval=INTERVAL, options=options)
    walk = run.walk
    output = run.result.stdout.decode().strip()
    sections = [
        d.section("1. samples and hot spots (hotspot.py: per window of "
                  f"{WINDOW} samples, a share >= {options.threshold:g}%)", _hot_spots(walk)),
        d.section("2. the walk, step by step (WalkUp.timeline: guest instructions run when each "
                  "step was taken)", [_step(s) for s in walk.timeline]),
        d.section("3. what each instrumented function learnt (its callers, from the return "
                  "addresses its hooks read)", _callers(walk)),
        d.section(None, [d.text(
            f"run: exit status {run.result.exit_code}, output {output!r}; {walk.hooks.executed} "
            f"hook runs in all, {run.cost.functions} functions hooked at some time")]),
    ]
    title = (f"{arch}: samples/bin/{arch}/callchain {ROUNDS}, trapline profile --walk-up "
             f"--interval {INTERVAL} --window {WINDOW} --threshold {THRESHOLD:g} --period {PERIOD}")
    return d.document("walkup", arch, title, sections, exit_status=run.result.exit_code,
                      output=output, hook_runs=walk.hooks.executed,
                      steps=len(walk.timeline), functions_hooked=run.cost.functions)


def _hot_spots(walk) -> list[dict]:
    spots = sorted(walk.detector.decided.values(), key=lambda s: (s.window, -s.samples, s.function.name))
    return [d.text(f"window {s.window}: {s.function.name} has {s.samples} of its samples "
                   f"({s.share:.0f}%, by {s.by}): a hot spot") for s in spots] + [
        d.text(f"{walk.detector.windows} windows decided in all")]


def _step(step) -> dict:
    f = step.function.name
    if step.action in ("insert", "remove"):
        what = ACTIONS[(step.action, step.kind)].format(f=f, level=step.level)
    elif step.action == "stop":
        what = f"the walk of {step.hot_spot.name} stops at {f}: {STOP_REASONS.get(step.kind, step.kind)}"
    elif step.action == "top":
        what = f"the walk of {step.hot_spot.name} reached the top at {f}"
    elif step.action == "join":
        what = f"{f} is already on the {step.kind}: the walk of {step.hot_spot.name} goes on in it"
    else:
        what = f"{step.action} {step.kind} {f}"
    return d.event(step.ts, None, f"{what} [hot spot {step.hot_spot.name}]")


def _callers(walk) -> list[dict]:
    out = []
    for entry in sorted(walk.callers, key=lambda e: (e.hot_spot.name if e.hot_spot else "",
                                                     e.level, e.function.name)):
        if entry.instrumented_at is None:
            continue
        seen = ", ".join(f"{c.name} ({n} calls)" for c, n in entry.callers.items()) or "none"
        stops = "; ".join(f"stopped: {s.why}" for s in entry.stops)
        out.append(d.text(f"{entry.function.name} (level {entry.level}): callers seen: {seen}"
                          + (f"; {stops}" if stops else "")))
    return out
