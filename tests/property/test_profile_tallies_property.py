"""A profile's tally of n ticks counts as its sample n times (issue 31: `--mode pc` counts its
samples per PC in C, trapline/profile/model.py): whatever the samples — processes, threads,
modules, functions with and without names, stacks, truncations, lines — and however they are
split between samples and tallies, every table of the report, the folded stacks and the total
are those of the profile holding each tick as a sample; and the samples in time order are the
per-sample profile's, with a tally's sample in the place of its first tick."""
from collections import Counter

from hypothesis import given, settings, strategies as st

from instrumenter.profiler.sampler import Sample
from instrumenter.profiler.symbolize import Frame
from trapline.profile.lines import SourceLine
from trapline.profile.model import Profile

MODULES = ("fib", "libc.so.6")
frames = st.builds(Frame, st.sampled_from(MODULES), st.sampled_from(["f", "g", "h", None]),
                   st.integers(0, 3), st.sampled_from([0x1000, 0x1004, 0x2000]))
samples = st.builds(lambda pid, tid, stack, truncated: (pid, tid, f"p{pid}", tuple(stack), truncated),
                    st.sampled_from([100, 101]), st.sampled_from([100, 102]),
                    st.lists(frames, max_size=3), st.sampled_from([None, None, "no CFI"]))


def test_a_tally_counts_as_its_ticks():
    reached = Counter()

    @settings(max_examples=max(settings().max_examples, 100))
    @given(drawn=st.lists(st.tuples(samples, st.integers(1, 4), st.booleans()), max_size=12),
           lines=st.dictionaries(st.tuples(st.sampled_from(MODULES), st.sampled_from([0x1000, 0x2000])),
                                 st.builds(SourceLine, st.just("a.c"), st.integers(1, 9)), max_size=3))
    def check(drawn, lines):
        each, counted = Profile(interval=10, mode="pc"), Profile(interval=10, mode="pc")
        each.lines = counted.lines = lines
        ts = 0
        for (pid, tid, comm, stack, truncated), n, as_tally in drawn:
            first = Sample(ts + 10, pid, tid, comm, stack, truncated)
            for k in range(n):
                ts += 10
                each.add(first._replace(ts=ts))
            if as_tally:
                counted.add_tally(first, n)
                reached["tally"] += 1
            else:
                for sample in each.samples[-n:]:
                    counted.add(sample)
        tables = ("by_process", "by_thread", "by_module", "self_by_function", "total_by_function",
                  "self_by_line", "truncated", "folded")
        for table in tables:
            assert getattr(counted, table)() == getattr(each, table)(), table
        assert counted.total == each.total and counted.interrupts == counted.tallied
        # in time order: each tally's sample where its first tick was
        assert [s.ts for s in counted.in_time_order()] == sorted(s.ts for s in counted.in_time_order())
        assert set(counted.in_time_order()) <= set(each.samples)
        reached["mixed"] += bool(counted.samples) and bool(counted.tallies)
        reached["lines"] += bool(counted.self_by_line()) and bool(counted.tallies)

    check()
    assert reached["tally"] and reached["mixed"] and reached["lines"], reached
