"""The walk-up's report (US 7,823,129): per hot spot the chain walked up with, at each level, the
metric (inclusive, and exclusive with --exclusive exact), invocations and the callers found; the
timeline of hooks inserted and removed in virtual time; and the perturbation comparison — full
instrumentation against the walk-up, hooks executed and guest instructions added. As rich tables
for the terminal and as JSON (`walkup.json` in -o DIR), both in a fixed order.
"""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .model import Profile
from .walkup_run import Comparison, WalkUpRun

# 2: "hooked", each hooked function's track in the Chrome trace.
# 3: each hot spot's "ends" (where and why its chain stopped); each level's "stops",
#    "outside_callers" (past recursion) and "timed_callees" (what its exclusive metric excludes:
#    exclusive is now inclusive less those callees' time in the same calls).
# 4: options "exclusive" ("off" or "exact", --exclusive); with "off" each level's
#    "insns_exclusive" and "time_exclusive" are null (no figure measured) and its
#    "timed_callees" empty. A report without the option is "exact" from version 3 on; the
#    exclusive counts of versions 1 and 2 (callees measured at the same moment only) are not shown.
WALKUP_VERSION = 4
UNITS = {"insns": "guest instructions", "calls": "invocations", "time": "virtual ns"}


def _name(function) -> str:
    return function.name if function is not None else "?"


def _level(level: int, entry) -> dict:
    m = entry.metric
    return {"level": level, "function": entry.function.name, "module": entry.function.module,
            "walk": _name(entry.hot_spot),
            "entry": entry.function.entry, "state": entry.state, "invocations": m.invocations,
            "returns": m.returns, "abandoned": m.abandoned, "hook_runs": entry.hook_runs,
            "insns_inclusive": m.insns_inclusive, "insns_exclusive": m.insns_exclusive,
            "time_inclusive": m.time_inclusive, "time_exclusive": m.time_exclusive,
            "callers": [{"function": f.name, "calls": n, "uncertain": entry.uncertain.get(f)}
                        for f, n in entry.callers.items()],
            "callees": [{"function": f.name, "calls": n} for f, n in entry.callees.items()],
            "unnamed_callers": [{"address": where, "calls": n} for where, n in entry.unnamed.items()],
            "instrumented_at": entry.instrumented_at, "removed_at": entry.removed_at,
            "outside_callers": [{"function": f.name, "calls": n} for f, n in entry.outside.items()],
            "timed_callees": [f.name for f in entry.timed],
            "stops": [{"reason": stop.reason, "why": stop.why} for stop in entry.stops]}


def _ends(walk, hot_spot) -> list[dict]:
    return [{"function": entry.function.name, "module": entry.function.module, "level": level,
             "reason": stop.reason, "why": stop.why} for level, entry, stop in walk.ends_of(hot_spot)]


def comparison_json(c: Comparison) -> dict:
    def run(cost) -> dict:
        return {"instructions": cost.instructions, "hooks_executed": cost.hooks,
                "instructions_added": c.added(cost), "functions_hooked": cost.functions,
                "strategies": cost.strategies, "objects": list(cost.objects)}
    return {"baseline": {"instructions": c.baseline.instructions}, "walkup": run(c.walkup),
            "full": run(c.full), "hooks_ratio": c.hook_ratio, "instructions_added_ratio": c.insn_ratio,
            "same_output": _same_output(c)}


def _same_output(c: Comparison) -> bool:
    """Every captured output alike (the live walk-up run's passes through to the terminal)."""
    outputs = [run.stdout for run in (c.baseline, c.full, c.walkup) if run.stdout is not None]
    return all(out == outputs[0] for out in outputs)


def walkup_json(run: WalkUpRun) -> dict:
    walk = run.walk
    o = walk.options
    return {
        "format": "trapline-walkup", "version": WALKUP_VERSION,
        "options": {"threshold": o.threshold, "top": o.top, "window": o.window,
                    "min_calls": o.min_calls, "metric": o.metric, "period": o.period,
                    "max_levels": o.max_levels, "exclusive": o.exclusive},
        "windows": walk.detector.windows,
        "hot_spots": [{"function": s.function.name, "module": s.function.module,
                       "window": s.window, "samples": s.samples, "share": round(s.share, 2),
                       "by": s.by, "chain": [_level(n, e) for n, e in walk.full_chain(s.function)],
                       "top": [f.name for f in walk.tops_of(s.function)],
                       "joins": _name(walk.joins.get(s.function)) if s.function in walk.joins else None,
                       "ends": _ends(walk, s.function)}
                      for s in walk.detector.decided.values()],
        "timeline": [{"ts": s.ts, "action": s.action, "kind": s.kind, "function": s.function.name,
                      "level": s.level, "hot_spot": s.hot_spot.name} for s in walk.timeline],
        # every function hooked at some time, in the caller list's order: its Chrome-trace track
        # (version 2; `trapline report -o` rebuilds the tracks from a recorded report)
        "hooked": [_level(e.level, e) for e in walk.callers if e.instrumented_at is not None],
        "hooks": {"executed": run.cost.hooks, "strategies": run.cost.strategies,
                  "still_inserted": [e.function.name for e in walk.callers.instrumented()],
                  "open_activations": len(walk.activations.still_open())},
        "instructions": run.cost.instructions,
        "comparison": comparison_json(run.comparison) if run.comparison else None,
    }


WALK_TID = 1 << 30          # the walk-up's own tracks in the Chrome trace (no guest tid is this high)


def chrome_events(data: dict, profile: Profile) -> list[dict]:
    """The walk-up in Chrome's trace-event format (ts in microseconds of virtual time, 1 ns per
    guest instruction), from its report (walkup_json: the live run's, or the one a recorded
    trace ends with, so that `trapline report -o` writes the live run's events): one track per
    hooked function with a complete event (ph X) for the time its hooks were in, and the
    timeline's steps as instant events (ph i) on a "walk-up" track. A report of version 1 (a
    trace recorded before version 3) has no `hooked` list: its steps only, no tracks."""
    pid = profile.samples[0].pid if profile.samples else 0
    end = data["instructions"]
    events = [{"ph": "M", "name": "thread_name", "pid": pid, "tid": WALK_TID, "args": {"name": "walk-up"}}]
    for index, hooked in enumerate(data.get("hooked", ()), 1):
        tid = WALK_TID + index
        start, removed = hooked["instrumented_at"], hooked["removed_at"]
        stop = removed if removed is not None else end
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                       "args": {"name": f"hooks: {hooked['function']} (level {hooked['level']})"}})
        events.append({"ph": "X", "name": hooked["function"], "cat": "walk-up", "pid": pid, "tid": tid,
                       "ts": start / 1000, "dur": (stop - start) / 1000,
                       "args": {"level": hooked["level"], "hot_spot": hooked["walk"],
                                "invocations": hooked["invocations"],
                                "insns_inclusive": hooked["insns_inclusive"]}
                       | _exclusive_arg(data, hooked)})
    for step in data["timeline"]:
        events.append({"ph": "i", "name": f"{step['action']} {step['kind']} {step['function']}",
                       "cat": "walk-up", "pid": pid, "tid": WALK_TID, "ts": step["ts"] / 1000, "s": "t",
                       "args": {"level": step["level"], "hot_spot": step["hot_spot"]}})
    return events


def _exclusive_arg(data: dict, hooked: dict) -> dict:
    """The exclusive count among a track's args, where one was measured (--exclusive exact)."""
    if not _has_exclusive(data) or hooked.get("insns_exclusive") is None:
        return {}
    return {"insns_exclusive": hooked["insns_exclusive"]}


def _has_exclusive(data: dict) -> bool:
    """Whether the report's exclusive counts are figures to show: --exclusive exact, or a
    report from before the option that made them exact (version 3); those of versions 1 and 2
    subtracted only the callees measured at the same moment, mostly none."""
    if "exclusive" in data["options"]:
        return data["options"]["exclusive"] == "exact"
    return data.get("version", 1) >= 3


def _table(title: str, columns) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for name, justify in columns:
        table.add_column(name, justify=justify)
    return table


def tables(data: dict) -> list[Table]:
    """The walk-up's tables from its report (walkup_json: a live run's, or a recorded one's)."""
    metric = data["options"]["metric"]
    exclusive = _has_exclusive(data)
    out = []
    for spot in data["hot_spots"]:
        title = (f"Walk-up from {spot['function']} ({spot['module']}): hot in window {spot['window']}, "
                 f"{spot['share']:.1f}% of its samples ({spot['by']})")
        chain = _table(title, [("level", "right"), ("function", "left"), ("state", "left"),
                               ("calls", "right"), ("insns incl", "right")]
                       + [("insns excl", "right")] * exclusive
                       + [("time incl", "right"), ("callers found", "left")])
        for level in spot["chain"]:
            callers = ", ".join([f"{c['function']}×{c['calls']}" + ("?" if c["uncertain"] else "")
                                 for c in level["callers"]]
                                + [f"{c['address']}×{c['calls']} (in no function)" for c in level["unnamed_callers"]]
                                + [f"{c['function']}×{c['calls']} (outside the recursion)"
                                   for c in level.get("outside_callers", ())])
            walked = "" if level["walk"] == spot["function"] else f" (walk of {level['walk']})"
            chain.add_row(str(level["level"]), level["function"] + walked, level["state"],
                          str(level["invocations"]), str(level["insns_inclusive"]),
                          *[str(level["insns_exclusive"])] * exclusive, str(level["time_inclusive"]),
                          callers)
        notes = []
        if spot["top"]:
            notes.append(f"top of the chain: {', '.join(spot['top'])}")
        if spot["joins"]:
            notes.append(f"goes on in the walk from {spot['joins']}")
        notes += [f"stopped at {end['function']} (level {end['level']}): {end['why']}"
                  for end in spot.get("ends", ())]
        timed = [f"{level['function']} less {', '.join(level['timed_callees'])}"
                 for level in spot["chain"] if level.get("timed_callees")]
        if timed:
            notes.append(f"insns excl: inclusive less the timed callees' (same calls): {'; '.join(timed)}")
        if not exclusive:
            notes.append("no exclusive counts (--exclusive exact times each level's callees for them)")
        if notes:
            chain.caption = "; ".join(notes)
        out.append(chain)
    timeline = _table(f"Hooks inserted and removed (virtual time in guest instructions; period "
                      f"{data['options']['period']} {UNITS[metric]})",
                      [("ts", "right"), ("action", "left"), ("hook", "left"), ("function", "left"),
                       ("level", "right"), ("hot spot", "left")])
    for step in data["timeline"]:
        timeline.add_row(str(step["ts"]), step["action"], step["kind"], step["function"],
                         str(step["level"]), step["hot_spot"])
    out.append(timeline)
    if data["comparison"] is not None:
        out.append(_comparison_table(data["comparison"]))
    return out


def _comparison_table(c: dict) -> Table:
    table = _table("Perturbation: full instrumentation against the walk-up (exact: both runs are "
                   "deterministic)", [("run", "left"), ("functions hooked", "right"),
                                      ("hooks executed", "right"), ("guest insns", "right"),
                                      ("insns added", "right")])
    table.add_row("no tool", "0", "0", str(c["baseline"]["instructions"]), "0")
    for name in ("full", "walkup"):
        run = c[name]
        table.add_row(name, str(run["functions_hooked"]), str(run["hooks_executed"]),
                      str(run["instructions"]), str(run["instructions_added"]))
    # The full run hooks every object the run maps (full.py); a walk-up that hooked an object
    # it did not would make the ratio compare different functions.
    outside = sorted(set(c["walkup"].get("objects", ())) - set(c["full"].get("objects", ())))
    if not c["full"]["functions_hooked"]:     # neither symbols nor FDEs: nothing to hook (full.py)
        ratios = "walk-up / full: no ratio, full instrumentation found no function to hook"
    elif outside:
        ratios = (f"walk-up / full: no like-for-like ratio, the walk-up hooked functions in "
                  f"{', '.join(outside)}, which the full run does not hook")
    else:
        ratios = (f"walk-up / full: hooks {100 * c['hooks_ratio']:.2f}%, instructions added "
                  f"{100 * c['instructions_added_ratio']:.2f}%")
    table.caption = f"{ratios}; same output: {c['same_output']}"
    return table


def finish_record(run: WalkUpRun) -> None:
    """End the recorded trace of `run` (if any) with its lines and the walk-up's report."""
    if run.writer is not None:
        writer, run.writer = run.writer, None
        writer.close(run.profile, walkup_json(run))


def print_walkup(run: WalkUpRun, console: Console) -> None:
    print_walkup_report(walkup_json(run), console)


def print_walkup_report(data: dict, console: Console) -> None:
    """What print_walkup prints, from the report (`trapline report` of a recorded walk-up)."""
    console.print(f"walk-up: {len(data['hot_spots'])} hot spots in {data['windows']} windows, "
                  f"{data['hooks']['executed']} hooks executed "
                  f"(strategies: {', '.join(f'{k} {v}' for k, v in data['hooks']['strategies'].items()) or 'none'})")
    for table in tables(data):
        console.print()
        console.print(table)
