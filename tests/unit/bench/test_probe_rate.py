"""bench/probe_rate.py's count of guest instructions a hit adds (issue 31: "a jump + native count
hit costs at most ~10 guest instructions"). Exact counts, so this guards the goal without timing:
a jump's native count is 4 instructions on x86-64 and 5 on i386, an int3 with a Python action 2
(the int3 and the jump back from the trampoline)."""
import pytest

from bench.probe_rate import guest_instructions_per_hit


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_jump_with_a_native_count_adds_at_most_ten_instructions_a_hit(arch):
    added = guest_instructions_per_hit(arch, n=10)
    assert 0 < added["jump count"] <= 10
    assert added["trampoline Python action"] == 2      # the int3 and the trampoline's jump back
    assert all(count == int(count) for count in added.values())     # the same every hit
