"""What a probe hit produces, and the per-process buffers records go to (seed 001 [0025]-[0027]).

A buffer has a fixed capacity. When it is full, the consumer's drain is called first; only if
nothing drains it are records dropped — and every drop is counted and reported, never silent.
"""
from dataclasses import dataclass, field


# One per hit: a frozen dataclass's __init__ costs ~1.5 µs more; the hit path passes the fields
# positionally (keywords cost more), so their order is part of the interface.
@dataclass(slots=True)
class Record:
    ts: int                  # virtual time: guest instructions executed so far (emu/icount.py)
    pid: int
    tid: int
    probe: str               # the probe spec exactly as the user wrote it
    addr: int
    args: tuple = ()
    retval: int | None = None
    kind: str = "entry"      # "entry", "return", "syscall_entry", "syscall_exit"
    name: str = ""           # symbolized address or syscall name

    def as_json(self) -> dict:
        return {"ts": self.ts, "pid": self.pid, "tid": self.tid, "probe": self.probe,
                "addr": self.addr, "args": list(self.args), "retval": self.retval}


@dataclass
class Buffer:
    pid: int
    capacity: int
    drain: object = None            # callable(list[Record]) that consumes a full buffer
    records: list = field(default_factory=list)
    dropped: int = 0

    def put(self, record: Record) -> None:
        if len(self.records) >= self.capacity:
            if self.drain is not None:
                self.flush()
            else:
                self.dropped += 1
                return
        self.records.append(record)

    def flush(self) -> None:
        if self.drain is not None and self.records:
            batch, self.records = self.records, []
            self.drain(batch)


class Buffers:
    """One buffer per process, created on its first record."""

    def __init__(self, capacity: int = 65536, drain=None):
        self.capacity = capacity
        self.drain = drain
        self.by_pid: dict[int, Buffer] = {}

    def put(self, record: Record) -> None:
        buffer = self.by_pid.get(record.pid)
        if buffer is not None:
            records = buffer.records
            if len(records) < buffer.capacity:
                records.append(record)              # the common case, inline (once per hit)
                return
        else:
            buffer = self.by_pid[record.pid] = Buffer(record.pid, self.capacity, self.drain)
        buffer.put(record)

    def flush(self) -> None:
        for pid in sorted(self.by_pid):
            self.by_pid[pid].flush()

    def dropped(self) -> dict[int, int]:
        return {pid: b.dropped for pid, b in sorted(self.by_pid.items()) if b.dropped}
