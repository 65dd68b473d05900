"""Watchpoints for a debugger: what x86's debug registers give ptrace users (PTRACE_POKEUSER
of DR0-DR3/DR7), as memory hooks (emu/watchpoints.py). Part of the debug interface
(kernel_model/debug/), one of its parts.

  add_watchpoint(space, address, length, kind, on_access)
        stop at every load (kind "read"), store ("write") or both ("access") the program's
        code makes of [address, address+length) in `space`, when `on_access(thread, pc,
        address, size, is_write)` says so (True); it runs inside Unicorn's hook: it may only
        decide. The run then ends before the accessing instruction (STOPPED exit, PC at it).
  settle_watch_stop(space)
        after that slice: the stopping instruction's stores are undone, so that it has not
        run (emu/watchpoints.py says why); the debugger runs it again and reports after it.
  remove_watchpoint(space, address, length, kind)

Only the program's instructions are watched: the kernel's own writes (a read(2) into the
buffer) and a tool's host writes are not accesses of guest code, as a data breakpoint does not
fire for them either.
"""
from emu.watchpoints import MemoryWatch

from .space_hooks import SpaceHooks


class WatchAccess:
    def __init__(self, kernel):
        self._kernel = kernel
        self._watches = SpaceHooks()             # space -> MemoryWatch

    def add_watchpoint(self, space, address: int, length: int, kind: str, on_access) -> None:
        kernel = self._kernel

        def access(pc, at, size, is_write):
            return on_access(kernel.current, pc, at, size, is_write)
        self._watches.hook(space, lambda machine: MemoryWatch(machine, access)).add(address, length, kind)

    def remove_watchpoint(self, space, address: int, length: int, kind: str) -> None:
        watch = self._watches.get(space)
        if watch is not None:
            watch.remove(address, length, kind)

    def settle_watch_stop(self, space) -> None:
        watch = self._watches.get(space)
        if watch is not None:
            watch.undo()

    def forget_watchpoints(self, space) -> None:
        watch = self._watches.pop(space)
        if watch is not None:
            watch.clear()
