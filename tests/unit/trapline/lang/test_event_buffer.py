"""A consumer's buffer limit (trapline/lang/event_buffer.py): between two drains (one a tick of
virtual time) the buffer keeps `limit` events and drops the rest, counted; what it keeps comes out
in order, at the next drain."""
from hypothesis import given, strategies as st

from trapline.lang.event_buffer import EventBuffer

PERIOD = 1000


@given(start=st.integers(0, 10**6), limit=st.integers(1, 5),
       gaps=st.lists(st.integers(0, 2 * PERIOD), min_size=1, max_size=60))
def test_each_tick_keeps_its_first_limit_events(start, limit, gaps):
    written = []
    buffer = EventBuffer(limit, start, written.append, period_ns=PERIOD)
    now, made = start, []
    for number, gap in enumerate(gaps):
        now += gap
        made.append((number, now))
        buffer.add(f"{number}\n", now)
    buffer.drain()
    # the same model said another way: group the events by their tick, keep each group's first
    per_tick: dict[int, list[int]] = {}
    for number, at in made:
        per_tick.setdefault((at - start) // PERIOD, []).append(number)
    kept = [number for tick in sorted(per_tick) for number in per_tick[tick][:limit]]
    assert "".join(written) == "".join(f"{number}\n" for number in kept)
    assert buffer.lost == len(made) - len(kept)


def test_a_drain_writes_what_was_kept_since_the_last():
    written = []
    buffer = EventBuffer(2, 0, written.append, period_ns=PERIOD)
    for at in (0, 10, 20, 999):          # tick 0: two kept, two lost; nothing written yet
        buffer.add(f"{at} ", at)
    assert written == [] and buffer.lost == 2
    buffer.add("1000 ", 1000)           # tick 1: tick 0's two go out first
    assert written == ["0 10 "]
    buffer.add("3500 ", 3500)
    buffer.drain()
    assert written == ["0 10 ", "1000 ", "3500 "] and buffer.lost == 2
