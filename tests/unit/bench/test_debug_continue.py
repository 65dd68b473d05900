"""bench/debug_continue.py measures what it says: the debugged run is attached (its initial stop
reported) and gives the plain run's output. Timings are the bench's."""
import pytest

from bench.debug_continue import continued


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_debugged_run_stops_once_at_its_start_and_prints_the_plain_output(arch):
    plain, none = continued(arch, 10, debugged=False)()
    out, stops = continued(arch, 10, debugged=True)()
    assert none == [] and stops[0] == "initial"
    assert out == plain and out.startswith(b"fib(10) = ")
