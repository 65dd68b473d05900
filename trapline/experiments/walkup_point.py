"""A sweep point that measures the walk-up (US 7,823,129) against full instrumentation, when the
spec has a [walkup] table: the program run with no tool, with every function hooked at entry
and exit, and under `trapline profile --walk-up` with the point's threshold, window, period,
interval and exclusive mode (trapline/profile/walkup_run.py, what `--compare-full` runs).
Hooks executed and guest instructions are exact: every run is deterministic.
"""
from __future__ import annotations

import hashlib

from .metrics import format_float


def walkup_row(plan, sandbox) -> dict:
    from instrumenter.profiler.walkup import WalkUpOptions

    from ..profile.walkup_run import Comparison, run_baseline, run_full, run_walkup
    argv = [plan.program, *plan.argv]
    options = WalkUpOptions(threshold=plan.walkup["threshold"], window=plan.walkup["window"],
                            period=plan.walkup["period"], exclusive=plan.walkup["exclusive"])
    base = run_baseline(sandbox, argv)
    full, _ = run_full(sandbox, argv)
    walk = run_walkup(sandbox, argv, interval=plan.walkup["interval"], options=options)
    comparison = Comparison(base, walk.cost, full)
    stdout = walk.result.stdout or b""
    return {"outcome": "ok", "error": "", "exit_code": walk.result.exit_code,
            "guest_insns": walk.cost.instructions,
            "stdout_sha256": hashlib.sha256(stdout).hexdigest(),
            "stderr_sha256": hashlib.sha256(walk.result.stderr or b"").hexdigest(),
            "stdout_bytes": len(stdout),
            "stdout_as_unprobed": stdout == base.stdout == full.stdout,
            "base_insns": base.instructions,
            "samples": len(walk.profile.samples),
            "walkup_hooks": walk.cost.hooks, "full_hooks": full.hooks,
            "walkup_functions": walk.cost.functions, "full_functions": full.functions,
            "walkup_added_insns": comparison.added(walk.cost),
            "full_added_insns": comparison.added(full),
            "hook_ratio": format_float(comparison.hook_ratio),
            "insn_ratio": format_float(comparison.insn_ratio)}
