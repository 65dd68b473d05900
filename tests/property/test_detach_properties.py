"""Detach at any moment changes nothing and leaves nothing (seed 003, US 7,017,153;
instrumenter/tracing/detach.py).

A sample — recursion (fib), threads (loss_threads), signals (signals), fork
(fork_probe) and vfork (vfork_probe) — is probed at entry and return of its functions with one
strategy of the registry (every one, and `relocate` when the registry has it: STRATEGIES reads
the registry), at a random quantum, and detached at a random instruction count — or from a probe's action at a random hit, so that
the safe point often finds a thread just sent into a trampoline. Then:
  * its output and exit status are the unprobed run's;
  * at the moment the detach is done, in every live process: the text of every mapped object
    is byte-identical to the image, no tool page is mapped, and no register and no word of any
    thread's live stack ([sp, end of its stack area)) points into the former tool pages.
Native actions (count, args:2: code and buffers in the guest) are drawn too: what they hold is
collected at the detach, and no record comes after it. A strategy that refuses a site of the sample is not an example (assume); floors on the
examples accepted, and on those where the detach had to move a PC or rewrite a return
address, keep the property from passing vacuously.
"""
from collections import Counter

from hypothesis import assume, event, given, settings, strategies as st

from instrumenter.strategies import registry

from .detach_harness import detach_run, unprobed

ARCHES = ("i386", "x86_64")
STRATEGIES = registry.NAMES                     # `relocate` too, once it is registered
# sample -> (arguments, functions probed, instructions of the probed process's run, about)
SAMPLES = {
    "fib": ((b"9",), ("fib",), 4500),
    "loss_threads": ((b"3", b"6"), ("probed", "worker"), 5500),
    "signals": ((), ("on_usr1", "on_alarm", "check"), 20000),
    "fork_probe": ((b"3", b"2"), ("leaf", "work"), 4700),
    "vfork_probe": ((), ("leaf", "work"), 8600),
}
EXAMPLES = max(150, settings.default.max_examples)   # runs are short (~0.1 s): more than ci's 30
FLOOR = 60                   # accepted examples
FLOOR_CLEANED = 20           # of them, detaches that moved a PC or rewrote a return address


@st.composite
def scenarios(draw):
    guest = draw(st.sampled_from(sorted(SAMPLES)))
    args, functions, horizon = SAMPLES[guest]
    chosen = draw(st.lists(st.sampled_from(functions), min_size=1, max_size=len(functions),
                           unique=True))
    specs = []
    for function in chosen:
        kinds = draw(st.sampled_from((("uprobe",), ("uretprobe",), ("uprobe", "uretprobe"))))
        specs += [f"{kind}:{guest}:{function}" for kind in kinds]
    native = draw(st.sampled_from((None, None, "count", "args:2")))
    return dict(arch=draw(st.sampled_from(ARCHES)), guest=guest, args=args, specs=specs,
                native=native, at_hit=draw(st.one_of(st.none(), st.integers(1, 40))),
                strategy=draw(st.sampled_from(STRATEGIES)), at=draw(st.integers(1, horizon)),
                quantum=draw(st.sampled_from((3, 7, 50, 1000))))


@settings(deadline=None, max_examples=EXAMPLES)
@given(scenario=scenarios())
def _detach_changes_nothing(tally: Counter, scenario):
    run = detach_run(scenario["arch"], scenario["guest"], scenario["args"], scenario["specs"],
                     scenario["strategy"], scenario["at"], scenario["quantum"], scenario["native"],
                     scenario["at_hit"])
    assume(run.refused is None)
    expected = unprobed(scenario["arch"], scenario["guest"], scenario["args"], scenario["quantum"])
    assert (run.exit_code, run.stdout) == expected
    if run.report is None:                          # the program ended before the count
        event("ended before the detach")
        return
    assert run.report.done and run.checked, run.report.waiting
    assert run.problems == [], run.problems
    # the records stop at the detach (native ones are collected there, stamped with its time)
    assert all(record.ts <= run.report.done_at for record in run.records)
    tally["accepted"] += 1
    if run.report.moved or run.report.rewritten:
        tally["cleaned"] += 1
    event(f"strategy {scenario['strategy']}")


def test_detach_at_a_random_count_changes_nothing_and_leaves_nothing():
    tally = Counter()
    _detach_changes_nothing(tally)
    assert tally["accepted"] >= FLOOR, tally
    assert tally["cleaned"] >= FLOOR_CLEANED, tally
