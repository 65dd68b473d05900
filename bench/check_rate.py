"""Examples per second of each property of `trapline check` (issue 29): the single-instruction
relocation property under Unicorn, the same on the host CPU (two traced host processes per
example, x86-64 Linux hosts), the probed-sequence property per strategy variant, and the
whole-program properties (process trees, threads at small quanta, removal and detach: a
sample run unprobed and probed per example, the unprobed runs not cached between repeats) on
the trampoline strategy, on the built-in strategies, both arches.

Each property runs its ci-budget battery (--examples 30: a case per class and placement and
one per form for relocation, a third per class for the host, 30 sequences) from seed 0; the
rate is examples run / CPU seconds (this process and its children: the host oracle's), best
of three. `python3 -m bench.check_rate`.
"""
import resource
import time

from trapline.testing import battery, guests
from trapline.testing.host import host_unavailable
from trapline.testing.host_oracle import check_on_host
from trapline.testing.subjects import subject

EXAMPLES = 30


def _cpu() -> float:
    own = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


def _rate(make_tally, plan, body) -> tuple[int, float]:
    best = float("inf")
    for _ in range(3):
        tally = make_tally()
        guests.unprobed.cache_clear()          # every repeat runs the unprobed samples too
        start = _cpu()
        battery.run_cases(tally, plan, body, seed=0)
        best = min(best, _cpu() - start)
        assert tally.failure is None and tally.error is None, (tally.failure, tally.error)
    return tally.run, tally.run / best


def rows(arch: str):
    trampoline, jump = subject("trampoline"), subject("jump")
    new = lambda name: lambda: battery.Tally(name, "bench", arch)     # noqa: E731
    yield "relocation", _rate(new("relocation"), battery.relocation_plan(arch, EXAMPLES),
                              battery.relocation_body(trampoline))
    if host_unavailable() is None:
        yield "relocation on the host CPU", _rate(
            new("host"), battery.host_plan(arch, EXAMPLES),
            battery.relocation_body(trampoline, check_on_host))
    for subj, variant in ((trampoline, "trampoline"), (jump, "jump"), (jump, "jump+count")):
        yield f"probed sequence ({variant})", _rate(
            new(variant), battery.sequence_plan(arch, EXAMPLES), battery.sequence_body(subj, variant))
    for prop in battery.properties(trampoline, arch, EXAMPLES):
        if prop.case_type in (battery.RelocationCase, battery.ProbedCase):
            continue
        yield f"{prop.name} (trampoline)", _rate(new(prop.name), prop.plan, prop.body)


def run() -> list[str]:
    """The table's lines (bench/run.py prints them beside the other benchmarks')."""
    lines = [f"{'property':45} {'arch':7} {'examples':>8} {'examples/s':>11}"]
    for arch in ("x86_64", "i386"):
        for name, (done, rate) in rows(arch):
            lines.append(f"{name:45} {arch:7} {done:8d} {rate:11.{0 if rate >= 100 else 1}f}")
    return lines


def main() -> None:
    print("\n".join(run()))


if __name__ == "__main__":
    main()
