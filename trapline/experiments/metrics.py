"""The columns of a results row: what each metric is and what it needs from the spec.

Every metric here is a function of the inputs (program bytes, spec, seed): the kernel's scheduler
and clock are deterministic. The host's wall and CPU time are measured too, but only ever in
columns named host_*, which verify skips and says so.
"""
from __future__ import annotations

from .spec import SpecError

# name -> (what it is, what it needs: "probes", "expected", "baseline", "expect_stdout" or "")
METRICS = {
    "outcome": ("ok, or the kind of error that ended the run (deadlock, max-insns, ...)", ""),
    "error": ("the first line of that error, empty when ok", ""),
    "exit_code": ("the guest's exit status as a shell reports it (128+N after signal N); "
                  "trapline's own status for a run that did not finish (124, 2, ...)", ""),
    "guest_insns": ("guest instructions as --max-insns charges them: every one when run.max_insns "
                    "is set, else only those of slices while several threads could run", ""),
    "stdout_sha256": ("sha256 of the guest's stdout", ""),
    "stderr_sha256": ("sha256 of the guest's stderr", ""),
    "stdout_bytes": ("length of the guest's stdout", ""),
    "stdout_matches": ("the stdout is program.expect_stdout", "expect_stdout"),
    "hits": ("hits of every probe together", "probes"),
    "hits_by_probe": ("hits per probe given in run.probes: 'p0=N p1=M'", "probes"),
    "cold_hits": ("hits of run.cold_probes together", "probes"),
    "pid_hits": ("records per process: 'PID=N ...'", "probes"),
    "placed": ("sites placed per strategy: 'jump=3 emulate=1'", "probes"),
    "refused": ("uprobes never placed", "probes"),
    "refusals": ("why: one reason per refused uprobe, ' | '-separated", "probes"),
    "held_thread_insns": ("thread-instructions other threads were held (singlestep-stopall)",
                          "probes"),
    "traps_taken": ("tool traps the kernel took (the door's count: an int3 with or without its "
                    "frame, a LOCK site's #UD, a claimed #DB)", "probes"),
    "traps_by_kind": ("the same per kind: 'int3=N int3_fast=M lock_ud=K step_db=L'", "probes"),
    "hooks_executed": ("the probes' hooks that ran, in Python or natively in the guest: one per "
                       "uprobe hit, two per uretprobe hit (entry and return)", "probes"),
    "samples": ("profile samples taken (the walk-up's sampler, or the [profile] point's)",
                ("walkup", "profile")),
    "exact_samples": ("samples of the exact profile: every instruction (interval 1, pc mode)",
                      "profile"),
    "functions_sampled": ("functions with at least one sample", "profile"),
    "functions_exact": ("functions with at least one instruction in the exact profile", "profile"),
    "profile_error": ("total variation distance of the per-function shares from the exact ones "
                      "(0..1, 6 decimals)", "profile"),
    "profile_max_error": ("the largest |sampled share - exact share| of one function (6 decimals)",
                          "profile"),
    "walkup_hooks": ("hooks the walk-up executed", "walkup"),
    "full_hooks": ("hooks full instrumentation (every function, entry and exit) executed",
                   "walkup"),
    "walkup_functions": ("functions the walk-up hooked at some time", "walkup"),
    "full_functions": ("functions full instrumentation hooked", "walkup"),
    "walkup_added_insns": ("guest instructions the walk-up added to the tool-less run", "walkup"),
    "full_added_insns": ("guest instructions full instrumentation added", "walkup"),
    "hook_ratio": ("walkup_hooks / full_hooks (6 decimals)", "walkup"),
    "insn_ratio": ("walkup_added_insns / full_added_insns (6 decimals)", "walkup"),
    "expected_hits": ("metrics.expected_hits for the point", "expected"),
    "lost_hits": ("expected_hits - hits", "expected"),
    "detached_at": ("the instruction clock when nothing of the tool was left (run.detach_after, "
                    "run.detach_on)",
                    "detach"),
    "base_insns": ("guest instructions of the same point run without probes (or without the "
                   "walk-up)", ("baseline", "walkup")),
    "added_insns": ("guest_insns - base_insns: what the instrumentation executed in the guest",
                    "baseline"),
    "added_insns_per_hit": ("added_insns / hits (6 decimals)", "baseline"),
    "stdout_as_unprobed": ("the stdout is the unprobed run's, byte for byte (the walk-up's: "
                           "the tool-less and the full run's; the profile's: the exact run's)",
                           ("baseline", "walkup", "profile")),
}
ALWAYS = ("outcome", "error", "exit_code")      # what every row needs to be read at all
HOST = {"host_wall_s": "host wall-clock seconds of the point (not deterministic)",
        "host_cpu_s": "host CPU seconds of the worker for the point (not deterministic)",
        "host_hits_per_cpu_s": "hits per host CPU second of the probed run (its start-up "
                               "included; not deterministic)",
        "host_profile_cpu_s": "host CPU seconds of the [profile] point's sampled run (not "
                              "deterministic)"}
NEEDS = {"probes": "run.probes or run.cold_probes", "expected": "metrics.expected_hits",
         "baseline": "metrics.baseline = true", "expect_stdout": "program.expect_stdout",
         "detach": "run.detach_after or run.detach_on", "walkup": "a [walkup] table",
         "profile": "a [profile] table"}


def is_host(column: str) -> bool:
    return column.startswith("host_")


def selected(spec) -> list[str]:
    """The metrics the spec collects: metrics.collect, or every one whose needs it meets."""
    have = _needs_met(spec)
    wanted = spec.table("metrics").get("collect")
    if wanted is None:
        return [m for m, (_, need) in METRICS.items() if _met(need, have)]
    for i, name in enumerate(wanted):
        if name not in METRICS:
            raise SpecError(f"{spec.source}: metrics.collect[{i}]: unknown metric {name!r} "
                            f"(have: {', '.join(METRICS)})")
        need = METRICS[name][1]
        if not _met(need, have):
            first = need[0] if isinstance(need, tuple) else need
            raise SpecError(f"{spec.source}: metrics.collect[{i}]: {name} needs {NEEDS[first]}")
    return [m for m in METRICS if m in wanted or m in ALWAYS]


def _met(need, have: set[str]) -> bool:
    """A metric's need: "" (none), one name, or a tuple of names any of which will do."""
    return any(n in have for n in need) if isinstance(need, tuple) else (not need or need in have)


def _needs_met(spec) -> set[str]:
    run, metrics = spec.table("run"), spec.table("metrics")
    have = {""}
    cold_swept = "cold_probes" in _swept(spec)
    if run.get("probes") or run.get("cold_probes") or cold_swept:
        have.add("probes")
    if "expected_hits" in metrics:
        have.add("expected")
    if metrics.get("baseline"):
        have.add("baseline")
    if "expect_stdout" in spec.table("program"):
        have.add("expect_stdout")
    if run.get("detach_after") or run.get("detach_on") or {"detach_after", "detach_on"} & _swept(spec):
        have.add("detach")
    for kind in ("walkup", "profile"):
        if kind in spec.data:
            have.add(kind)
    return have


def _swept(spec) -> set[str]:
    from .sweep import names
    return set(names(spec.table("sweep"))) | set(spec.params)


def format_float(value: float) -> float:
    """Floats in results have six decimals, written the same way everywhere."""
    return float(f"{value:.6f}")
