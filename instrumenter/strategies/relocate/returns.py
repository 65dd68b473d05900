"""Original-space return pointers (US 6,898,785: calls from relocated instrumented
functions to functions that expect a return pointer in the original address space).

A call in a relocated copy pushes the ORIGINAL return address R (the address after the call in
the original function: the relocator's call recipe) and jumps to the callee, so the callee,
its backtraces, `__builtin_return_address`, libgcc's unwinder (FDEs are found for R), setjmp
and signal frames all see original addresses. A breakpoint at R (a door patch) maps the
return back into the copy when the callee returns.

Every return to R goes into the copy (strategy.py `_on_return`), whether the call was made
there or not — a call made by original code (a thread that was in the function before it was
relocated), a longjmp to a setjmp whose call returned already, a vfork child on its parent's
stack: the copy's piece for R runs the same instruction with the same registers and stack, so
the probes go on firing. Just before a call, a call-out int3 in the copy records (thread,
stack pointer S, R) — S is the stack pointer before the call pushes R, hence what it is again
after the callee's `ret` (`ret imm16` pops more: the record with the largest S at or below the
stack pointer wins); the return drops the record and every deeper one of that thread (frames a
longjmp or an exception abandoned are below the stack pointer). The records no longer decide
where a return goes (they did when unrecorded returns went on in original code); the call-out
that makes them costs a trap per call and could go.
"""


class ReturnRecords:
    """(space serial, tid) -> [(S, R)], oldest call first."""

    def __init__(self):
        self.records: dict[tuple[int, int], list[tuple[int, int]]] = {}

    def push(self, serial: int, tid: int, sp: int, original_return: int) -> None:
        self.records.setdefault((serial, tid), []).append((sp, original_return))

    def pop(self, serial: int, tid: int, sp: int, original_return: int) -> bool:
        """The return to `original_return` with the stack pointer at `sp` came from the copy:
        drop its record and the abandoned deeper ones."""
        mine = self.records.get((serial, tid))
        if not mine:
            return False
        match = max((s for s, r in mine if r == original_return and s <= sp), default=None)
        if match is None:
            return False
        kept = [(s, r) for s, r in mine if s > sp]
        if kept:
            self.records[(serial, tid)] = kept
        else:
            del self.records[(serial, tid)]
        return True

    def pending(self, serial: int) -> int:
        return sum(len(v) for (s, _), v in self.records.items() if s == serial)

    def fork(self, serial: int, tid: int, child_serial: int, child_tid: int) -> None:
        """fork() returns in the child too: the forking thread's calls are the child's
        thread's (same stack, copied)."""
        mine = self.records.get((serial, tid))
        if mine:
            self.records[(child_serial, child_tid)] = list(mine)

    def forget(self, serial: int) -> None:
        for key in [k for k in self.records if k[0] == serial]:
            del self.records[key]
