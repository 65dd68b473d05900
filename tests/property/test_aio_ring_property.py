"""The AIO ring (kernel_model/aio/ring.py) is a FIFO of completion events in the pages Linux
maps at the context's address: whatever the interleaving of completions and reaps (by the
kernel, io_getevents, or by user space advancing `head` itself, as libaio does), events come
out in the order they completed, each once, the header's tail follows the kernel's, and a
request is refused a slot (aio_get_req) exactly when nr_events - 1 are taken by unreaped
events. The ring's size is what aio_setup_ring gives: whole pages, at least the doubled
request and its two spare slots."""
import struct

from hypothesis import example, given, settings, strategies as st

from kernel_model.aio.abi import AIO_RING, IO_EVENT, RING_HEAD_OFFSET, RING_TAIL_OFFSET
from kernel_model.aio.ring import KioCtx, doubled_request, ring_events
from kernel_model.memory.layout import PAGE

steps = st.lists(st.one_of(st.tuples(st.just("complete"), st.integers(1, 200)),
                           st.tuples(st.just("take"), st.integers(0, 300)),
                           st.tuples(st.just("user_reap"), st.integers(0, 300))),
                 max_size=60)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), steps)
@example(1, [("complete", 200)])                                  # the ring full: refused
@example(1, [("complete", 100), ("take", 100), ("complete", 100), ("take", 50),
             ("user_reap", 30), ("complete", 90)])                # head and tail wrap around
def test_events_come_out_in_completion_order(nr_events, script):
    kioctx = KioCtx(ring_events(doubled_request(nr_events)), nr_events, lambda channel: None)
    try:
        _play(kioctx, script)
    finally:
        kioctx.release()


def _play(kioctx: KioCtx, script) -> None:
    queued, serial, refused = [], 0, 0
    for action, count in script:
        if action == "complete":
            for _ in range(count):
                room = len(queued) < kioctx.nr_events - 1
                assert kioctx.has_room() == room
                if not room:
                    refused += 1
                    break
                serial += 1
                kioctx.complete(obj=0x1000 + serial, data=serial, res=-serial)
                queued.append(serial)
        elif action == "take":
            got = [IO_EVENT.unpack(raw) for raw in kioctx.take_events(count)]
            expected, queued = queued[:count], queued[count:]
            assert got == [(n, 0x1000 + n, -n, 0) for n in expected]
        else:                        # user space moves head past `count` events itself
            count = min(count, len(queued))
            head = struct.unpack_from("<I", kioctx.pages.read(RING_HEAD_OFFSET, 4))[0]
            head = (head + count) % kioctx.nr_events
            kioctx.pages.write(RING_HEAD_OFFSET, struct.pack("<I", head))
            queued = queued[count:]
        assert kioctx.in_ring() == len(queued)
        tail = struct.unpack("<I", kioctx.pages.read(RING_TAIL_OFFSET, 4))[0]
        assert tail == kioctx.tail
    if any(action == "complete" and count >= kioctx.nr_events for action, count in script):
        assert refused, "a full ring was reached but no request was refused"


@given(st.integers(1, (0x10000000 // IO_EVENT.size) // 2))
def test_the_ring_fills_whole_pages(nr_events):
    doubled = doubled_request(nr_events)
    events = ring_events(doubled)
    assert events >= doubled + 2
    size = AIO_RING.size + events * IO_EVENT.size
    assert size % PAGE == 0 or PAGE - size % PAGE < IO_EVENT.size
