"""One hit followed instruction by instruction: what a step-through of `trapline explain` shows.

A debugger's code breakpoints (kernel_model/debug/run.py add_code_breakpoint: a hook before the
instruction at an address, no byte patched, so it coexists with the tool's int3s and jumps) are
put on every address the hit may run: the probed site and the tool code of its trampoline. The
first thread that reaches the site is followed; each breakpoint it passes is one step, with
its registers read then, so the change an instruction made is the difference between its step
and the next one. The breakpoints answer False (run on): the program is not stopped, only
watched, and the recording ends at `until` (the original code the hit goes back to).

Steps are numbered from 1 rather than stamped with the instruction clock: inside a code hook
the clock may stand at its translated block's start, and a step-through needs only the order.

Memory: at each step the recorder reads the words the instruction may write (written.py: its
memory operands, and the word below the stack pointer, where a push, a call or an emulated push
stores), and reads them again at the next step; a word that differs is a change of that step,
named by its address ([0x7fffffffed08]), after the registers'.
"""
from __future__ import annotations

import capstone

from .written import written_words

GENERAL = {"i386": ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "eflags"),
           "x86_64": ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10",
                      "r11", "r12", "r13", "r14", "r15", "rflags")}


def exits_of(debug, process, path: list[int]) -> set[int]:
    """Where a hit through the tool code at `path` may leave it for the program: the targets of
    its branches that lie outside the tool's area (the jump back, a relocated branch taken, a
    relocated call's jump to its callee)."""
    from instrumenter.insn.decode import decode
    if not path:
        return set()
    arch = debug.arch(process).name
    tool = debug.area_at(process, path[0])
    out = set()
    for address in path:
        target = decode(debug.read_memory_raw(process, address, 16), address, arch).branch_target
        if target is not None and not tool.start <= target < tool.end:
            out.add(target)
    return out


class StepRecorder:
    """Watches `addresses` in `process`'s space; records the first pass from `start` to the
    first address of `until` (one address, or a set: every way the hit may leave)."""

    def __init__(self, debug, process, start: int, addresses, until, *, watch=None,
                 watch_name: str = "watched", where=None):
        self.debug, self.process = debug, process
        self.arch = debug.arch(process).name
        self.start = start
        self.until = set(until) if isinstance(until, (set, frozenset, list, tuple)) else {until}
        self.watch = watch or (lambda: None)       # extra state read at each step (a counter)
        self.watch_name = watch_name
        self.where = where or (lambda address: "")  # a name for an address (tool code, symbol)
        # (tid, address, registers, watched, the code bytes there, {address: bytes} it may write)
        self.raw: list[tuple[int, int, dict, object, bytes, dict]] = []
        self.tid: int | None = None
        self.after: list[dict] = []   # after step k: the words step k's instruction may write
        self.done = False
        self.addresses = sorted(set(addresses) | {start} | self.until)
        for address in self.addresses:
            debug.add_code_breakpoint(process.space, address, self._on_hit)

    def _on_hit(self, thread, address: int) -> bool:
        if self.done or (self.tid is None and address != self.start) \
                or (self.tid is not None and thread.tid != self.tid):
            return False
        self.tid = thread.tid
        registers = {name: self.debug.read_register(thread, name) for name in GENERAL[self.arch]}
        code = self.debug.read_memory_raw(self.process, address, 16)   # as the thread runs it
        if self.raw:                  # what the previous step's instruction left in memory
            self.after.append(self._read(self.raw[-1][5]))
        targets = {a: n for a, n in written_words(code, address, self.arch, registers)}
        self.raw.append((thread.tid, address, registers, self.watch(), code, self._read(targets)))
        if address in self.until and len(self.raw) > 1:
            self.done = True
        return False

    def _read(self, words: dict) -> dict:
        """{address: bytes} now, for {address: size} (or the sizes of a former read)."""
        out = {}
        for at, size in words.items():
            try:
                out[at] = self.debug.read_memory(self.process, at, size if isinstance(size, int)
                                                 else len(size))
            except Exception:                # noqa: BLE001 -- an unmapped word shows no change
                continue
        return out

    def close(self) -> None:
        for address in self.addresses:
            self.debug.remove_code_breakpoint(self.process.space, address)

    def items(self) -> list[dict]:
        """The steps as document items."""
        cs = capstone.Cs(capstone.CS_ARCH_X86,
                         capstone.CS_MODE_32 if self.arch == "i386" else capstone.CS_MODE_64)
        out = []
        for n, (tid, address, registers, watched, code, before) in enumerate(self.raw):
            nxt = self.raw[n + 1] if n + 1 < len(self.raw) else None
            changes = []
            if nxt is not None:
                changes = [(name, registers[name], nxt[2][name]) for name in GENERAL[self.arch]
                           if registers[name] != nxt[2][name]]
                if watched != nxt[3] and watched is not None:
                    changes.append((self.watch_name, watched, nxt[3]))
                after = self.after[n] if n < len(self.after) else {}
                changes += [(f"[{at:#x}]", int.from_bytes(old, "little"),
                             int.from_bytes(after[at], "little"))
                            for at, old in sorted(before.items())
                            if at in after and after[at] != old]
            insn = next(cs.disasm(code, address, 1), None)
            if insn is not None:
                raw, asm = bytes(insn.bytes), f"{insn.mnemonic} {insn.op_str}".strip()
            else:               # a LOCK prefix on an instruction that takes none: #UD (SDM 2A 2.1.1)
                raw, asm = code[:1], f"(no valid instruction at {code[:4].hex(' ')}...: #UD)"
            out.append(step(n + 1, tid, address, raw, asm, self.where(address), changes,
                            last=nxt is None))
        return out


def step(n: int, tid: int, address: int, raw: bytes, asm: str, where: str, changes, *,
         last: bool) -> dict:
    return {"kind": "step", "n": n, "tid": tid, "address": address, "bytes": raw.hex(),
            "asm": asm, "where": where, "last": last,
            "changes": [{"name": name, "before": before, "after": after}
                        for name, before, after in changes]}

