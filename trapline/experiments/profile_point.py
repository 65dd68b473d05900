"""A sweep point that measures the sampling profiler's error against the exact profile, when the
spec has a [profile] table (US 7,823,129's tprof phase: `trapline profile --interval N --mode M`).

The exact profile is the same program sampled at every instruction (interval 1, pc mode: the
timer interrupts before each instruction, so every instruction but the last — the exit call's,
after which no tick comes — is one sample of its function): each function's share of the
guest's instructions. The point's own run samples every `interval` instructions; its error is
how far its per-function shares are from the exact ones:
  profile_error      the total variation distance, half the sum over functions of
                     |sampled share - exact share| (0: the same shares, 1: disjoint), and
  profile_max_error  the largest |sampled share - exact share| of one function.
A function is a sample's leaf frame, named as the report names it (module, function). Both
runs are deterministic (virtual time), so the error is exact too; what the sampling costs on
the host is host_profile_cpu_s (the sampled run's CPU time, never compared).
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import Counter

from .metrics import format_float

EXACT_INTERVAL = 1
# Both runs have an instruction budget, so that the kernel charges every slice and every tick
# comes at its instruction: without one, ticks due inside a single thread's slice are not all
# taken (measured on callchain 5, x86-64: 2948 samples at interval 1 for 13319 instructions,
# 13318 with a budget). A budget far beyond any run changes nothing else.
UNBOUNDED = 1 << 62


def profile_row(plan, sandbox) -> dict:
    from ..profile.session import run_profiled
    argv = [plan.program, *plan.argv]
    budget = plan.max_insns or UNBOUNDED

    def run(interval: int, mode: str):
        return run_profiled(dataclasses.replace(sandbox, tools=list(sandbox.tools), max_insns=budget),
                            argv, interval=interval, mode=mode, histogram=True)
    exact = run(EXACT_INTERVAL, "pc")
    cpu = time.process_time()
    sampled = run(plan.profile["interval"], plan.profile["mode"])
    sampled_cpu = time.process_time() - cpu
    truth, seen = leaf_counts(exact.profile), leaf_counts(sampled.profile)
    stdout = sampled.result.stdout or b""
    return {"outcome": "ok", "error": "", "exit_code": sampled.result.exit_code,
            "guest_insns": sampled.result.insns_charged,
            "stdout_sha256": hashlib.sha256(stdout).hexdigest(),
            "stderr_sha256": hashlib.sha256(sampled.result.stderr or b"").hexdigest(),
            "stdout_bytes": len(stdout),
            "stdout_as_unprobed": stdout == (exact.result.stdout or b""),
            "samples": sampled.profile.total, "exact_samples": exact.profile.total,
            "functions_sampled": len(seen), "functions_exact": len(truth),
            "profile_error": format_float(total_variation(seen, truth)),
            "profile_max_error": format_float(max_share_error(seen, truth)),
            "host_profile_cpu_s": format_float(sampled_cpu)}


def leaf_counts(profile) -> Counter:
    """Samples per (module, function) of the leaf frame."""
    return profile.self_by_function()


def shares(counts: Counter) -> dict:
    total = sum(counts.values())
    return {key: n / total for key, n in counts.items()} if total else {}


def total_variation(sampled: Counter, exact: Counter) -> float:
    """Half the L1 distance of the two share distributions (a function missing from one has
    share 0 there)."""
    p, q = shares(sampled), shares(exact)
    return sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in _keys(p, q)) / 2


def max_share_error(sampled: Counter, exact: Counter) -> float:
    p, q = shares(sampled), shares(exact)
    return max((abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in _keys(p, q)), default=0.0)


def _keys(p: dict, q: dict) -> list:
    """Sorted: a float sum in a fixed order, whatever the set's order in this process."""
    return sorted(p.keys() | q.keys())
