"""bench/quantum.py measures what it says: every mode of samples/quantum.c does the same work
and prints the same line. Timings are the bench's."""
import pytest

from bench.quantum import WORKERS, quantum_run


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("mode", ["inline", "threads", "fork"])
def test_every_mode_prints_the_same_sums(arch, mode):
    assert quantum_run(arch, mode, 12) == f"workers={WORKERS} fib(12)=144 sum={3 * 144}\n".encode()

