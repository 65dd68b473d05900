"""bench/fib_speed.py's bare baseline (issue 31): fib(n) called alone on a bare Uc gives fib(n),
and the Uc's TLB is filled as the Machine fills it (emu/tlb.py's page walker, each page with its
own permissions), not Unicorn's own TLB under which every store takes the slow path: the baseline
trapline is compared with must not be slower than trapline's own arrangement. Timings are the
bench's."""
import pytest

from bench.fib_speed import bare_fib
from emu.tlb import PageWalker


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_baseline_fills_the_tlb_with_each_pages_permissions(arch):
    run = bare_fib(arch, 15)
    assert isinstance(run.walker, PageWalker)
    assert run() == _fib(15)
    assert run() == _fib(15)            # again, from the saved start


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_unicorns_own_tlb_is_still_there_to_compare(arch):
    run = bare_fib(arch, 15, own_tlb=True)
    assert run.walker is None and run() == _fib(15)
