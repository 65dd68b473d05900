"""What a probe hit produces, and the per-process buffers records go to (US 7,350,196 [0025]-[0027]).

A buffer has a fixed capacity. The record that fills it has the consumer's drain called at once
(a capacity of 1 streams every record as it is made, before the guest runs on: the CLI's
records then interleave with the guest's own output in program order); only if nothing drains
it are records dropped — and every drop is counted and reported, never silent.

A buffer holds raw rows, as the patent's per-CPU buffers hold raw data that the consumer decodes:
a row is a plain tuple of a Record's fields in order, and the drain receives Records made from
them. Rows of ints and strings are tuples the garbage collector stops tracking, so a run that
keeps a million records pending does not pay for traversing them at every collection (with six
argument words a hit cost measurably more while buffered hits were Record objects).
"""
from dataclasses import dataclass, field


# The order of the fields is the order of a buffered row's values (module docstring).
@dataclass(slots=True)
class Record:
    ts: int                  # virtual time: guest instructions executed so far (emu/icount.py)
    pid: int
    tid: int
    probe: str               # the probe spec exactly as the user wrote it
    addr: int
    args: tuple = ()
    retval: int | None = None
    kind: str = "entry"      # "entry", "return", "syscall_entry", "syscall_exit", "proc", "signal"
    name: str = ""           # symbolized address, syscall name, or the event's name
    fields: tuple = ()       # a proc/signal event's fields: (name, value) pairs in a fixed order

    def as_json(self) -> dict:
        record = {"ts": self.ts, "pid": self.pid, "tid": self.tid, "probe": self.probe,
                  "addr": self.addr, "args": list(self.args), "retval": self.retval}
        if self.fields:
            record["fields"] = dict(self.fields)
        return record


@dataclass
class Buffer:
    pid: int
    capacity: int
    drain: object = None            # callable(list[Record]) that consumes a full buffer
    rows: list = field(default_factory=list)
    dropped: int = 0

    def put(self, row: tuple) -> None:
        if len(self.rows) >= self.capacity:         # full with no drain (a drain empties it)
            self.dropped += 1
            return
        self.rows.append(row)
        if len(self.rows) >= self.capacity and self.drain is not None:
            self.flush()

    def flush(self) -> None:
        if self.drain is not None and self.rows:
            batch, self.rows = self.rows, []
            self.drain([Record(*row) for row in batch])


class Buffers:
    """One buffer per process, created on its first record."""

    # put_block(ts, pid, tid, probe, addr, name, words, count): `count` entry records of one
    # site, their args `words` in order, taken at once by a streaming consumer that offers it
    # (trapline's StreamSink); None: the records go one by one through put.
    put_block = None

    def __init__(self, capacity: int = 65536, drain=None):
        self.capacity = capacity
        self.drain = drain
        self.by_pid: dict[int, Buffer] = {}
        if capacity == 1 and getattr(drain, "put_row", None) is not None:
            # Streaming to a consumer that takes rows (trapline's StreamSink): each row goes
            # straight to it, in the order of the run, with no Buffer and no Record on the
            # way (issue 31: they were a large part of a hit's record cost, measured by
            # bench/trace_cost.py). Nothing is ever pending here, so nothing can drop.
            self.put = drain.put_row
            self.put_block = getattr(drain, "put_block", None)
        # put_plain(row): put for an entry or return row whose arguments are ints, its retval
        # None or an int, without fields (a uprobe's entry hook: from registers and memory); a sink
        # that takes such rows writes a batch of them without asking each (issue 31)
        self.put_plain = getattr(drain, "put_plain_row", self.put) \
            if self.put is getattr(drain, "put_row", None) else self.put

    def put(self, row: tuple) -> None:
        """Buffer one record, given as a row: its fields in Record's order."""
        pid = row[1]
        buffer = self.by_pid.get(pid)
        if buffer is not None:
            rows = buffer.rows
            if len(rows) < buffer.capacity - 1:
                rows.append(row)                    # the common case, inline (once per hit)
                return
            if buffer.capacity == 1 and buffer.drain is not None and not rows:
                buffer.drain([Record(*row)])        # streaming: the record goes at once
                return
        else:
            buffer = self.by_pid[pid] = Buffer(pid, self.capacity, self.drain)
        buffer.put(row)

    def flush(self) -> None:
        for pid in sorted(self.by_pid):
            self.by_pid[pid].flush()

    def dropped(self) -> dict[int, int]:
        return {pid: b.dropped for pid, b in sorted(self.by_pid.items()) if b.dropped}
