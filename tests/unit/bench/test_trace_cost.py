"""bench/trace_cost.py's record rates divide by the hits the probed run really makes (issue 31:
they divided by F(28), half of fib 27's calls, so every rate was printed at half its value)."""
import pytest

from bench.trace_cost import FIB27_HITS, SAMPLES
from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_hits_of_fib_27_are_the_bench_s(arch):
    fib = str(SAMPLES / arch / "fib")
    spec = f"uprobe:{fib}:fib"
    probe = Probe(parse_probe_spec(spec), native="count")     # no trap a hit: a second's run
    result = Sandbox(probes=[probe], strategy="jump").run([fib, "27"])
    assert result.exit_code == 0
    assert result.hits[spec] == FIB27_HITS
