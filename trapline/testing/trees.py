"""Process trees: a strategy's probes in a program that forks, vforks and execs (US 7,185,320).

samples/forkscript runs a generated script (forkscript.py: calls, forks, vforks, execs, exits,
nested) and prints each image's pid and calls. Probed at the entry and/or return of its
functions with the strategy, children followed, every process must behave as unprobed (exit
status, pids, calls) and record exactly one hit per call per site, under its own pid: a
fork child inherits the parent's patches and the strategy's bookkeeping (a trampoline or a
jump copy it shares), a vfork child runs in the parent's space, an exec replaces the image
and the strategy places its probes again.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hypothesis import strategies as st

from .forkscript import FUNCTIONS, Output, argv, scripts
from .guests import output_difference, probed_run, unprobed

GUEST = "forkscript"
KIND = {"uprobe": "entry", "uretprobe": "return"}


@dataclass
class TreeCase:
    """A forkscript script and the probes on its functions (plain data: its repr is Python)."""
    arch: str
    steps: list
    specs: list

    def __repr__(self) -> str:
        return f"TreeCase({self.arch!r}, {self.steps!r}, {self.specs!r})"


@st.composite
def tree_cases(draw, arch: str) -> TreeCase:
    steps = draw(scripts(max_depth=2, vfork_children_flat=False))
    specs = []
    for function in sorted(FUNCTIONS.values()):
        for kind in draw(st.sampled_from(((), ("uprobe",), ("uretprobe",), ("uprobe", "uretprobe")))):
            specs.append(f"{kind}:{GUEST}:{function}")
    if not specs:
        specs.append(f"uprobe:{GUEST}:{draw(st.sampled_from(sorted(FUNCTIONS.values())))}")
    return TreeCase(arch, steps, specs)


def tree_difference(case: TreeCase, strategy: str) -> str | None:
    """None when every process behaved as unprobed and recorded each call once; else the
    first difference (Refused, Broken propagate)."""
    args = tuple(argv(case.steps))
    code, out = unprobed(case.arch, GUEST, args, None)
    run = probed_run(case.arch, GUEST, args, None, case.specs, strategy)
    if run.exit_code != code:
        return output_difference((code, out), run)
    plain, probed = Output(out), _output(run.stdout)
    if probed is None or (probed.pid, probed.calls) != (plain.pid, plain.calls):
        return output_difference((code, _without_hashes(out)), _hashless(run))
    expected = _expected_records(plain, case.specs)
    got: dict[int, Counter] = {}
    for record in run.records:
        function = record.probe.split(":")[-1]
        got.setdefault(record.pid, Counter())[(function, record.kind)] += 1
    for pid in sorted(set(expected) | set(got)):
        want, have = expected.get(pid, Counter()), got.get(pid, Counter())
        if want != have:
            key = min(set(want) | set(have), key=lambda k: (want[k] == have[k], k))
            return (f"pid {pid}: {key[0]} {key[1]} hits: the process made {want[key]} calls, "
                    f"the probe recorded {have[key]}")
    return None


def _expected_records(out: Output, specs) -> dict[int, Counter]:
    """Each call of a probed (straight-line) function passes each of its sites once."""
    sites = [(text.split(":")[-1], KIND[text.split(":")[0]]) for text in specs]
    expected: dict[int, Counter] = {}
    for pid, calls in out.calls_per_pid().items():
        counts = Counter({site: calls[site[0]] for site in sites if calls[site[0]]})
        if counts:
            expected[pid] = counts
    return expected


def _output(stdout: bytes) -> Output | None:
    try:
        return Output(stdout)
    except AssertionError:           # a line forkscript never prints: the probe changed it
        return None


def _without_hashes(stdout: bytes) -> bytes:
    """forkscript's output less its code-hash lines (they show the probes' bytes by design)."""
    return b"".join(line for line in stdout.splitlines(keepends=True) if b": code=" not in line)


def _hashless(run):
    from dataclasses import replace
    return replace(run, stdout=_without_hashes(run.stdout))


def describe(case: TreeCase) -> list[str]:
    return [f"  forkscript {' '.join(argv(case.steps))}", f"  probes: {', '.join(case.specs)}"]
