"""Watchpoints (GDB's watch/rwatch/awatch: Z2/Z3/Z4), through the debug interface's memory
hooks (kernel_model/debug/watch.py). Mixed into Debugger.

A watched access stops the thread before the accessing instruction, with the instruction's
stores undone (emu/watchpoints.py); the debugger then runs exactly that instruction (the
stepper's one original instruction) and reports the stop after it, with the watched address:
x86's data breakpoints are traps after the instruction (Intel SDM Vol. 3B 17.3.1.2), and GDB
reads the new value there for `watch`.

Only the program's own accesses count: the tool's code — a native action writing a record
into its buffer, a trampoline saving registers on the stack — stands for no original
instruction (the tool address map has no exact point there), and its accesses pass. A
relocated copy of a probed instruction is the program's instruction, and stops. While a
step runs (the user's, or the rerun of a watched instruction) accesses pass too: the step
ends by its own rule.
"""
from .events import WATCH, StopEvent

KINDS = ("write", "read", "access")           # emu/watchpoints.py: WRITE, READ, ACCESS


class Watchpoints:
    def insert_watchpoint(self, address: int, length: int, kind: str, process=None) -> None:
        for target in [process] if process is not None else self.live_processes():
            self.watchpoints.setdefault(target.pid, set()).add((address, length, kind))
            self.debug.add_watchpoint(target.space, address, length, kind, self._on_watch)

    def remove_watchpoint(self, address: int, length: int, kind: str, process=None) -> None:
        for target in [process] if process is not None else self.live_processes():
            self.watchpoints.get(target.pid, set()).discard((address, length, kind))
            if self.debug.is_alive(target):
                self.debug.remove_watchpoint(target.space, address, length, kind)

    def _on_watch(self, thread, pc: int, address: int, size: int, is_write: bool) -> bool:
        """Inside Unicorn's memory hook: stop for this access?"""
        if self.detached or thread is None or self.stepper.active is not None:
            return False
        hit = self._watched(thread.process.pid, address, size, is_write)
        if hit is None:
            return False
        location = self.addrmap.lookup(thread.process, pc)
        if location is not None and not location.exact:
            return False                                  # the tool's own code
        self._watch_hits[thread.tid] = hit
        return True

    def _watched(self, pid: int, address: int, size: int, is_write: bool):
        """(kind, first watched byte accessed) of the watchpoint the access falls in."""
        for start, length, kind in sorted(self.watchpoints.get(pid, ())):
            if kind == "write" and not is_write or kind == "read" and is_write:
                continue
            if address < start + length and start < address + size:
                return kind, max(address, start)
        return None

    def settle_watch_hit(self, thread) -> None:
        """After the slice a watched access ended: undo the instruction's stores, run it as one
        step, and report the watchpoint after it."""
        hit = self._watch_hits.pop(thread.tid, None)
        if hit is None:
            return
        self.debug.settle_watch_stop(thread.process.space)
        kind, address = hit
        self.stepper.start(thread, StopEvent(WATCH, thread=thread, address=address, watch=kind))
