"""Instruction alarms: a tool's callback run when the run's instruction clock (emu/icount.py,
the virtual time of every record) reaches a count — perf_events' instruction-count overflow,
without the skid: the run loop ends the running slice exactly there.

An alarm fires in the run loop, between two guest instructions and outside every Unicorn hook
(a safe point: a tool may patch code, map or free its pages, place or remove probes). The
running Machine's slice is cut at the earliest alarm when that Machine counts on the clock; a
Machine that does not count (a process no tool follows) does not move the clock, so an alarm
falls due only once counted code runs again. An alarm added while the guest runs inside a hook
(a probe's action) stops the Machine, so that the loop sees it at once; one added for a count
already reached fires at that stop: "now, at the next safe point".

Alarms fire in count order, then in the order they were added (a sequence number: never the
order of a set), so a run with the same inputs fires the same callbacks at the same counts.
"""
import heapq
import itertools


class InstructionAlarms:
    def __init__(self, clock):
        self.clock = clock                      # emu.icount.InstructionClock of the run
        self._heap: list = []                   # (count, sequence, callback)
        self._sequence = itertools.count()

    def __bool__(self) -> bool:
        return bool(self._heap)

    def add(self, count: int, callback) -> None:
        heapq.heappush(self._heap, (count, next(self._sequence), callback))

    def due(self) -> bool:
        """An alarm's count is reached: the run loop should get to a safe point now."""
        return bool(self._heap) and self._heap[0][0] <= self.clock.total

    def cap(self, count: int, machine) -> tuple[int, bool]:
        """The instruction count for `machine`'s next run (0: unlimited), cut at the earliest
        alarm if the Machine counts on the clock; and whether the alarm is what limits it."""
        if not self._heap or machine.icount is not self.clock:
            return count, False
        left = max(self._heap[0][0] - self.clock.total, 1)
        if count and count <= left:
            return count, False
        return left, True

    def watch(self, machine) -> bool:
        """An alarm may fall due while `machine` runs (it counts on the clock): its slice must
        end exactly at its count, not at a block boundary after it (emu/quantum_clock.py)."""
        return bool(self._heap) and machine.icount is self.clock

    def fire(self) -> int:
        """Run every alarm whose count the clock has reached (callbacks may add more); returns
        how many ran."""
        fired = 0
        while self._heap and self._heap[0][0] <= self.clock.total:
            _, _, callback = heapq.heappop(self._heap)
            callback()
            fired += 1
        return fired
