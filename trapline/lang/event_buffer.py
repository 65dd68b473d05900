"""A consumer's buffer limit (`config = { buffer_limit = N }`), as bpftrace's lost events.

bpftrace's printf, print, time and join are events its probes write into a perf ring buffer
that bpftrace drains from user space; when the probes write faster than it drains, the kernel
drops what does not fit and bpftrace prints "Lost N events". In the sandbox the probes and the
consumer share one modeled CPU and the guest is busy, so the consumer is modeled as draining
at each scheduler tick of virtual time (CONFIG_HZ=1000: every millisecond, counted from the
consumer's start), when a woken reader on a busy CPU runs at the earliest. Between two ticks the
buffer keeps `limit` events; the others are dropped and counted. This is deterministic: the same
run gives the same ticks, the same drops and the same output.

Without a limit nothing is ever lost (the consumer writes each event as it is made).
"""

TICK_NS = 1_000_000


class EventBuffer:
    def __init__(self, limit: int, start_ns: int, deliver, period_ns: int = TICK_NS):
        self.limit, self.start_ns, self.period_ns = limit, start_ns, period_ns
        self.deliver = deliver        # writes drained text to the consumer's output
        self.pending: list[str] = []
        self.tick = 0                 # the tick the pending events were made after
        self.lost = 0

    def add(self, text: str, now_ns: int) -> None:
        """An event made at virtual time `now_ns`: kept if the buffer has room since the last
        drain, else dropped. A tick passed since the pending events drains them first (the
        drain happened then, before this event was made)."""
        tick = (now_ns - self.start_ns) // self.period_ns
        if tick != self.tick:
            self.drain()
            self.tick = tick
        if len(self.pending) >= self.limit:
            self.lost += 1
            return
        self.pending.append(text)

    def drain(self) -> None:
        if self.pending:
            text, self.pending = "".join(self.pending), []
            self.deliver(text)
