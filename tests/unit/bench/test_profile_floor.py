"""bench/profile.py's floor of the deterministic modes (issue 31): the bare Unicorn loop of
fib_speed.py with no block hook, an empty C block hook, or the block clock's hook computes the
same fib(n), and the clock's hook counts its instructions, the same count on every run (the
hook is on and counting, not merely added). Timings are the bench's."""
import pytest

from bench.profile import _hooked_bare_fib
from emu import block_clock

FIB_15 = 610


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_every_hook_computes_the_same_fib_and_the_clock_counts_it(arch):
    if not block_clock.available():
        pytest.fail("no C compiler for the block clock")
    for hook in ("none", "empty", "clock"):
        assert _hooked_bare_fib(arch, 15, hook)() == FIB_15
    run = _hooked_bare_fib(arch, 15, "clock")
    run()
    once = run.clock.executed
    run()
    # fib(15) calls fib 1973 times: more than one instruction each, and each run alike
    assert once > 1973 and run.clock.executed == 2 * once


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_every_variant_counted_by_instructions_runs_fib(arch):
    """bench/profile_instructions.py's variants (valgrind counts them; the counts are the
    bench's): each runs fib to its end with fib's output."""
    from bench.profile_instructions import VARIANTS, run_variant

    for variant in VARIANTS:
        result = run_variant(variant, arch, 15)
        assert result.exit_code == 0 and b"fib(15) = 610" in result.stdout, variant
    with pytest.raises(ValueError):
        run_variant("pc, per what?", arch, 15)
