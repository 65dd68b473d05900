"""Reading native actions back (instrumenter/strategies/native.py): counters and args:N records
collected from guest memory into the session's hits and records, at process exit, exec, the
end of the run, and — for an args:N buffer that fills up — at once, from the guest's own trap.

A full buffer does not drop records: the append is a restartable sequence (the debug
interface's rseq for tools, kernel_model/debug/restartable.py) that ends in one committing
increment, so every record below the index is complete whatever thread was switched out where,
and a full buffer traps (an int3 in the part) into `_drain`, which collects the slot, resets its
index and sends the thread back to the start of its append.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..probes.records import Buffer

if TYPE_CHECKING:       # (native.py imports capstone: a session that places nothing needs none)
    from .native import NativeSlot

@dataclass
class SpaceNatives:
    """The native slots of one address space, and the process its counts belong to."""
    space: object
    process: object
    slots: list = field(default_factory=list)


class NativeCollector:
    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        self.spaces: dict[int, SpaceNatives] = {}        # space.serial -> its slots
        self.per_pid: dict[tuple[str, int], int] = {}    # (probe spec, pid) -> native hits

    def arm(self, process, page, natives) -> None:
        """The args:N parts of a page just laid out (page_layout.lay_out, `natives` its
        (slot, owner) pairs in order): their appends are restartable sequences and their
        drain traps are ours."""
        parts = [block.start for block in page.blocks if block.name.startswith("UserInstrumentation")]
        space = process.space
        for (slot, _), part in zip(natives, parts):
            if slot.sequence is None:
                continue                                       # a count
            start, commit, trap = (part + offset for offset in slot.sequence)
            self.debug.register_restartable(space, start, commit + 1, start)
            self.debug.register_breakpoint(space, trap, self._drainer(slot, start))

    def _drainer(self, slot: NativeSlot, restart: int):
        def drain(frame, thread):
            """The buffer is full: collect it now (records, hits), its index back to 0, and
            the thread back to the start of its append."""
            view = _SpaceView(thread.process.space)
            self._collect_slot(view, slot, thread.process.pid, self.debug.arch(view).word)
            frame.ip = restart
            return True
        return drain

    def add(self, process, slot: NativeSlot) -> None:
        key = process.space.serial
        entry = self.spaces.get(key)
        if entry is None:
            entry = self.spaces[key] = SpaceNatives(process.space, process)
        entry.slots.append(slot)

    def fork(self, parent, child) -> None:
        """The child's memory holds copies of the parent's counters and records: zero them
        there (the parent's own are collected from the parent), then track them."""
        entry = self.spaces.get(parent.space.serial)
        if entry is None or parent.space is child.space:
            return
        self.collect_space(entry)
        for slot in entry.slots:
            size = slot.size(self.debug.arch(child).word) if slot.spec.kind == "table" else 16 if slot.array else 8
            self.debug.write_memory(child, slot.counter, b"\0" * size)
            self.add(child, slot)        # same addresses in the copy; counts go to the child

    def collect(self) -> None:
        """Turn what the guests accumulated since the last collection into hits and records."""
        for entry in list(self.spaces.values()):
            self.collect_space(entry)

    def collect_probes(self, probes) -> None:
        """Collect only the slots of the probes whose ids are in `probes` (a tool that drains one
        site's records whenever their order against other output matters)."""
        for entry in list(self.spaces.values()):
            slots = [slot for slot in entry.slots if id(slot.hook.probe) in probes]
            if slots:
                view = _SpaceView(entry.space)
                word = self.debug.arch(view).word
                for slot in slots:
                    self._collect_slot(view, slot, entry.process.pid, word)

    def forget_space(self, space) -> None:
        """The last collection of a space nobody runs in any more."""
        entry = self.spaces.pop(space.serial, None)
        if entry is not None:
            self.collect_space(entry)

    def collect_space(self, entry: SpaceNatives) -> None:
        view = _SpaceView(entry.space)
        word = self.debug.arch(view).word
        for slot in entry.slots:
            self._collect_slot(view, slot, entry.process.pid, word)

    def _collect_slot(self, view, slot: NativeSlot, pid: int, word: int) -> None:
        if slot.spec.kind == "count":
            self._collect_count(view, slot, pid)
        elif slot.spec.kind == "table":      # a keyed aggregation (native_table.py)
            from .native_table import collect_table
            collect_table(self, view, slot, pid)
        else:
            self._collect_args(view, slot, pid, word)

    def _collect_count(self, view, slot: NativeSlot, pid: int) -> None:
        count = struct.unpack("<Q", self.debug.read_memory(view, slot.counter, 8))[0]
        if count:
            self.debug.write_memory(view, slot.counter, b"\0" * 8)
            self._credit(slot, pid, count)

    def _collect_args(self, view, slot: NativeSlot, pid: int, word: int) -> None:
        fmt = "<I" if word == 4 else "<Q"
        written = struct.unpack(fmt, self.debug.read_memory(view, slot.counter, word))[0]
        dropped = struct.unpack("<Q", self.debug.read_memory(view, slot.dropped, 8))[0]
        stored = min(written, slot.spec.capacity)
        if not written and not dropped:
            return
        n = slot.spec.nargs
        raw = self.debug.read_memory(view, slot.array, stored * n * word)
        values = struct.unpack(f"<{stored * n}{fmt[1]}", raw)
        self.debug.write_memory(view, slot.counter, b"\0" * 16)       # index and drops
        buffers = self.session.buffers
        # Collection time in instructions (emu/icount.py): the guest code has no clock.
        ts = self.debug.instructions_retired(view)
        # Native records carry no thread id (the guest code does not know it): tid 0.
        if buffers.put_block is not None:       # a streaming consumer takes them as one block
            buffers.put_block(ts, pid, 0, slot.hook.probe.spec.text, slot.site, slot.name, values, stored)
        else:
            for i in range(stored):
                buffers.put((ts, pid, 0, slot.hook.probe.spec.text, slot.site,
                             values[i * n:(i + 1) * n], None, "entry", slot.name))
        self._credit(slot, pid, stored + dropped)
        if dropped:
            self._count_drops(pid, dropped)

    def _credit(self, slot: NativeSlot, pid: int, count: int) -> None:
        probe = slot.hook.probe
        probe.hits += count
        key = (probe.spec.text, pid)
        self.per_pid[key] = self.per_pid.get(key, 0) + count

    def _count_drops(self, pid: int, dropped: int) -> None:
        """Records the guest could not store are drops of that process's buffer (reported
        with the others: never silent)."""
        buffers = self.session.buffers
        buffer = buffers.by_pid.get(pid)
        if buffer is None:
            buffer = buffers.by_pid[pid] = Buffer(pid, buffers.capacity, buffers.drain)
        buffer.dropped += dropped


class _SpaceView:
    """What the debug interface needs of a process to read a space that its process may have
    left by exec: the space (it stays alive while the collector holds it)."""

    def __init__(self, space):
        self.space = space
