"""Watchpoints: stop the CPU at a load or store of watched bytes (what x86's debug registers
DR0-DR3 with R/W bits 01 or 11 do, Intel SDM Vol. 3B 17.2.4), for a debugger's `watch`,
`rwatch` and `awatch` (GDB's Z2/Z3/Z4).

A memory hook ranged to exactly the watched bytes. Such a hook sends the stores and loads of
the pages it covers down Unicorn's slow path (tlb.py says why the Machine has none otherwise):
a watchpoint costs while it is set, like GDB's, and nothing once removed.

Unicorn calls the hook before the access, with the PC of the accessing instruction. When
`on_access(pc, address, size, is_write)` says stop (True), the run ends there with a STOPPED
exit at that PC; but the access itself still happens (a store is written when the hook
returns) while the registers stay as before the instruction (Unicorn leaves from the memory
helper with the state of the instruction's start, as QEMU does for a precise fault). So the
store is recorded with the bytes it overwrites, and `undo()` puts them back: the instruction
has then not run at all, and runs again whole when the thread resumes — an exact state, as
a page fault would have left it. The debugger runs it (one step) and reports the stop after
it, as the CPU's data breakpoint traps after the instruction (SDM 17.3.1.2).
"""
from unicorn import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE, UC_MEM_WRITE

from . import exits

READ, WRITE, ACCESS = "read", "write", "access"
_HOOK_KINDS = {READ: UC_HOOK_MEM_READ, WRITE: UC_HOOK_MEM_WRITE,
               ACCESS: UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE}


class MemoryWatch:
    def __init__(self, machine, on_access):
        self.machine = machine
        self.on_access = on_access            # (pc, address, size, is_write) -> bool
        self._hooks: dict[tuple, int] = {}    # (address, length, kind) -> hook handle
        self._undo: list[tuple[int, bytes]] = []
        self._stopping = False

    def add(self, address: int, length: int, kind: str) -> None:
        key = (address, length, kind)
        if key in self._hooks:
            return
        self._hooks[key] = self.machine.uc.hook_add(_HOOK_KINDS[kind], self._on_access, None,
                                                    address, address + length - 1)
        self.machine.exact_count_users.add(self)     # a stop inside a block (lazy_count.py)

    def remove(self, address: int, length: int, kind: str) -> None:
        hook = self._hooks.pop((address, length, kind), None)
        if hook is not None and not self.machine.closed:
            self.machine.uc.hook_del(hook)
        if not self._hooks:
            self.machine.exact_count_users.discard(self)

    def clear(self) -> None:
        for key in list(self._hooks):
            self.remove(*key)

    def watched(self) -> list[tuple]:
        return sorted(self._hooks)

    def undo(self) -> None:
        """Put back what the stopping instruction stored (latest first): it has not run."""
        undo, self._undo, self._stopping = self._undo, [], False
        for address, old in reversed(undo):
            self.machine.mem.write(address, old)

    def _on_access(self, uc, access, address, size, _value, _user):
        machine = self.machine
        is_write = access == UC_MEM_WRITE
        if self._stopping:                    # a later access of the instruction that stops
            if is_write:
                self._undo.append((address, bytes(uc.mem_read(address, size))))
            return
        pc = machine.pc
        if not self.on_access(pc, address, size, is_write):
            return
        self._stopping = True
        if is_write:
            self._undo.append((address, bytes(uc.mem_read(address, size))))
        # The counting hook counted the instruction, which runs again when resumed: take it
        # back, as code_breakpoints.py does, so that a debugged run's virtual time is unchanged.
        if machine._count_hook:
            machine._insns.value -= 1
        machine._finish(exits.Exit(exits.STOPPED, pc))
