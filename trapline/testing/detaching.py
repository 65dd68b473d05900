"""Removal and detach at any point (US 7,017,153): a sample probed with the strategy, and at a
drawn instruction count either every probe detached (Session.detach) or some probes removed
(Session.remove_probe), whatever the threads are doing there — inside a trampoline, between
a hit and its return, in a fork child or a signal handler.

Then the program's output and exit status must be the unprobed run's (at the same quantum);
a removed probe records nothing more; after a detach nothing of the tool is left in any live
process (leftovers.py: text, tool pages, registers and stack words), and no record is later
than the detach.
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from .guests import Skipped, output_difference, probed_run, unprobed
from .leftovers import leftovers, text_problems

# sample -> (arguments, functions probed, instructions of the probed process's run)
SAMPLES = {
    "fib": (("9",), ("fib",), 4500),
    "loss_threads": (("3", "6"), ("probed", "worker"), 5500),
    "signals": ((), ("on_usr1", "on_alarm", "check"), 20000),
    "fork_probe": (("3", "2"), ("leaf", "work"), 4700),
    "vfork_probe": ((), ("leaf", "work"), 8600),
}
HOW = ("detach", "remove")


@dataclass
class DetachCase:
    """Plain data (its repr is Python): the sample, its probes, the quantum, and `how`
    ("detach": every probe; "remove": the probes numbered in `removed`) at instruction `at`."""
    arch: str
    guest: str
    specs: list
    quantum: int
    how: str
    at: int
    removed: tuple = ()

    @property
    def args(self) -> tuple[str, ...]:
        return SAMPLES[self.guest][0]


def draw_probe_specs(draw, guest: str, functions) -> list[str]:
    """Entry probes, return probes or both on a drawn, non-empty subset of `functions`."""
    chosen = draw(st.lists(st.sampled_from(functions), min_size=1, max_size=len(functions),
                           unique=True))
    specs = []
    for function in chosen:
        kinds = draw(st.sampled_from((("uprobe",), ("uretprobe",), ("uprobe", "uretprobe"))))
        specs += [f"{kind}:{guest}:{function}" for kind in kinds]
    return specs


@st.composite
def detach_cases(draw, arch: str) -> DetachCase:
    guest = draw(st.sampled_from(sorted(SAMPLES)))
    _, functions, horizon = SAMPLES[guest]
    specs = draw_probe_specs(draw, guest, functions)
    how = draw(st.sampled_from(HOW))
    removed = ()
    if how == "remove":      # every probe (then the text must be the image's again), or some
        every = tuple(range(len(specs)))
        removed = every if draw(st.booleans()) else \
            tuple(sorted(draw(st.sets(st.integers(0, len(specs) - 1), min_size=1))))
    return DetachCase(arch, guest, specs, draw(st.sampled_from((3, 7, 50, 1000))), how,
                      draw(st.integers(1, horizon)), removed)


class _Watch:
    """What happened at the drawn instruction: the detach's leftovers, the removed probes'
    hits at their removal."""

    def __init__(self, case: DetachCase):
        self.case = case
        self.done = False
        self.problems: list[str] = []
        self.hits_at_removal: dict[int, int] = {}
        self.done_at = None

    def schedule(self, kernel, session, probes) -> None:
        def act():
            if self.case.how == "detach":
                session.detach(at_once=True, on_done=lambda report: self._detached(kernel, report))
                return
            for number in self.case.removed:
                self.hits_at_removal[number] = probes[number].hits
                session.remove_probe(probes[number])
            if len(self.case.removed) == len(probes):
                # (after the removals' own safe-point work, which was asked first)
                kernel.debug.at_safe_point(lambda: self._removed(kernel))
            else:
                self.done = True
        kernel.debug.at_instruction(self.case.at, act)

    def _removed(self, kernel) -> None:
        self.done = True
        self.problems += [f"{problem} after removing every probe" for problem in text_problems(kernel)]

    def _detached(self, kernel, report) -> None:
        self.done, self.done_at = True, report.done_at
        self.problems += leftovers(kernel, report)


def detach_difference(case: DetachCase, strategy: str) -> str | None:
    expected = unprobed(case.arch, case.guest, case.args, case.quantum)
    watch = _Watch(case)
    run = probed_run(case.arch, case.guest, case.args, case.quantum, case.specs, strategy,
                     before_run=watch.schedule)
    diff = output_difference(expected, run)
    if diff is not None:
        return diff
    if not watch.done:
        raise Skipped("the program ended before the drawn instruction")
    if watch.problems:
        return watch.problems[0] if case.how == "remove" else \
            f"left after the detach: {watch.problems[0]}"
    for number, hits in watch.hits_at_removal.items():
        if run.probes[number].hits != hits:
            return (f"{case.specs[number]} recorded {run.probes[number].hits - hits} hits "
                    f"after its removal")
    if watch.done_at is not None:
        late = [r for r in run.records if r.ts > watch.done_at]
        if late:
            return f"a record after the detach: {late[0].probe} at {late[0].ts}"
    return None


def describe(case: DetachCase) -> list[str]:
    what = "detach" if case.how == "detach" else \
        "remove " + ", ".join(case.specs[n] for n in case.removed)
    return [f"  {case.guest} {' '.join(case.args)} at quantum {case.quantum}, probes "
            f"{', '.join(case.specs)}", f"  {what} at instruction {case.at}"]
