"""A consumer's buffer limit on a real guest (config = { buffer_limit = N }): a consumer that
makes more events than its buffer keeps between two drains loses the rest and says how many,
as bpftrace's "Lost N events"; a consumer without a limit in the same run loses none."""
import re

import pytest

from tests.e2e.lang.lang_run import ARCHES, sample, trace

pytestmark = pytest.mark.e2e
LOST = re.compile(r"^trapline: -e: Lost (\d+) events", re.M)
TICK_NS = 1_000_000           # the modeled drain period (trapline/lang/event_buffer.py)


def fib_calls(n: int) -> int:
    """How many times fib(n) calls fib (itself included): the sample's naive recursion."""
    return 1 if n < 2 else 1 + fib_calls(n - 1) + fib_calls(n - 2)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_limit_drops_a_known_number_and_no_limit_none(arch):
    """fib(12)'s 465 calls are made within one drain period (1 ms of virtual time): the
    limited consumer keeps its first 10, the other all."""
    fib = sample(arch, "fib")
    probe = f'uprobe:{fib}:fib {{ printf("%s %d\\n", PREFIX, arg0); }}'
    done = trace("-e", "config = { buffer_limit = 10 } " + probe.replace("PREFIX", '"limited"'),
                 "-e", probe.replace("PREFIX", '"free"'), "--", fib, "12")
    limited = [line for line in done.stdout.splitlines() if line.startswith("limited ")]
    free = [line for line in done.stdout.splitlines() if line.startswith("free ")]
    calls = fib_calls(12)
    assert len(free) == calls
    assert [line.split()[1] for line in limited] == [line.split()[1] for line in free[:10]]
    assert [int(count) for count in LOST.findall(done.stderr)] == [calls - 10]
    alone = trace("-e", probe.replace("PREFIX", '"free"'), "--", fib, "12")
    assert "Lost" not in alone.stderr and alone.stdout.count("free ") == calls


@pytest.mark.parametrize("arch", ARCHES)
def test_each_drain_makes_room_again(arch):
    """An interval probe every 100 us of virtual time makes ~10 events a drain period: with a
    limit of 3, each period keeps its first 3, as the run without a limit times them."""
    fib = sample(arch, "fib")
    probe = 'interval:us:100 { printf("%d\\n", elapsed); }'
    free = [int(line) for line in trace("-e", probe, "--", fib, "27").stdout.splitlines()
            if line.isdigit()]
    per_tick: dict[int, list[int]] = {}
    for elapsed in free:
        per_tick.setdefault(elapsed // TICK_NS, []).append(elapsed)
    assert len(per_tick) > 2 and max(map(len, per_tick.values())) > 3     # several drains, drops
    kept = [elapsed for tick in sorted(per_tick) for elapsed in per_tick[tick][:3]]
    done = trace("-e", "config = { buffer_limit = 3 } " + probe, "--", fib, "27")
    assert [int(line) for line in done.stdout.splitlines() if line.isdigit()] == kept
    assert [int(count) for count in LOST.findall(done.stderr)] == [len(free) - len(kept)]
