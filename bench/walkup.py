"""The walk-up against full instrumentation (issue 18, US 7,823,129's argument): on a sample with a
hot leaf, hooks executed and guest instructions added by `trapline profile --walk-up` vs every
function of the program hooked at entry and exit, side by side with the host time of each run
and the ratios, for both ways of --exclusive: "off" (the default: US 7,823,129's identifying and
measuring hooks only, no exclusive figure) and "exact" (each measured level's callees timed too,
for an exact exclusive count). Goal, US 7,823,129's argument: the walk-up with --exclusive off
executes <= 1 % of full instrumentation's hooks; exact pays for its figure in timing hooks.

Hooks and instructions are exact (the runs are deterministic: the same numbers every time);
host times are the best of 3 by CPU time and move with the host's load.
"""
import dataclasses
import time

from instrumenter.profiler.walkup import WalkUpOptions
from trapline import Sandbox
from trapline.profile.walkup_run import Comparison, run_baseline, run_full, run_walkup

from .common import SAMPLES, best_of

INTERVAL = 10_000
OPTIONS = WalkUpOptions(threshold=20, window=20, period=100)      # exclusive="off"
EXACT = dataclasses.replace(OPTIONS, exclusive="exact")
PROGRAMS = (("callchain", "2000"), ("hotchain", "150"))


def _cpu_best(fn):
    return best_of(fn, clock=time.process_time)


def run() -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        for name, arg in PROGRAMS:
            if not (SAMPLES / arch / name).exists():
                continue
            argv = [str(SAMPLES / arch / name), arg]
            base_t, baseline = _cpu_best(lambda: run_baseline(Sandbox(), argv))
            full_t, (full, _) = _cpu_best(lambda: run_full(Sandbox(), argv))
            walk_t, walk = _cpu_best(lambda: run_walkup(Sandbox(), argv, interval=INTERVAL, options=OPTIONS))
            exact_t, exact = _cpu_best(lambda: run_walkup(Sandbox(), argv, interval=INTERVAL, options=EXACT))
            c, x = Comparison(baseline, walk.cost, full), Comparison(baseline, exact.cost, full)
            assert baseline.stdout == full.stdout == walk.result.stdout == exact.result.stdout
            lines.append(
                f"{name} {arg} {arch:6}: hooks executed full {full.hooks} vs walk-up off "
                f"{walk.cost.hooks} ({100 * c.hook_ratio:.2f}%, goal <= 1%), exact {exact.cost.hooks} "
                f"({100 * x.hook_ratio:.2f}%); guest insns added full {c.added(full)} vs walk-up off "
                f"{c.added(walk.cost)} ({100 * c.insn_ratio:.2f}%), exact {x.added(exact.cost)} "
                f"({100 * x.insn_ratio:.2f}%) of {baseline.instructions}; host CPU no tool "
                f"{base_t * 1e3:.0f} ms, full {full_t / base_t:.2f}x, walk-up off {walk_t / base_t:.2f}x, "
                f"exact {exact_t / base_t:.2f}x (sampling included)")
    return lines


if __name__ == "__main__":
    for line in run():
        print(line)
