"""The stack unwinder of the sampling profiler (US 7,823,129: "the call stack" of each sample).

Two ways up from one frame to its caller, tried in this order:
  - CFI (loader/cfi.py): the object's `.eh_frame` says, for the very instruction, where the
    CFA is and where the return address and the saved registers are. Exact at every
    instruction, prologues and epilogues included; the only way through code built without
    frame pointers (Debian's).
  - the frame-pointer chain (US 7,823,129, and every profiler since): for code without CFI, but
    only in a function that is seen to keep one — it starts with `push %ebp; mov %esp,%ebp`
    (or the %rbp forms) — with the entry instruction, the one after the push and a `ret`
    told apart, where the frame is not (or no longer) set up.
Before either, a return address into a signal restorer (or an interrupted PC in one) is a
signal frame (sigframe.py): the walk goes on at the interrupted PC with the registers the
kernel saved, as gdb and perf do, and the frame stays in the stack as the signal's mark.
Anything else ends the walk with the stack marked truncated and the reason: a stack is never
completed by guessing. A walk is complete when it reaches the outermost frame: a return
address the CFI declares undefined (glibc's `_start`, `clone`), a frame pointer of zero where
there is no CFI (the psABI: "user code should mark the deepest stack frame by setting the frame
pointer to zero", which musl's `_start` and `__clone` do), or the program's entry function.

Everything is read through the debug interface: the interrupted thread's registers, the
process's memory and the objects mapped in it.
"""
from __future__ import annotations

from typing import NamedTuple

from emu.memory import MemoryAccessError
from kernel_model.debug import CALLEE_SAVED, PROT_EXEC
from loader.cfi import CallFrameTable, CfiUnsupported

from .dwarf_expr import evaluate, register_offset
from .frameless import in_plt, is_pic_thunk, is_plt_jump, is_ret
from .sigframe import SIGCONTEXT, SIGCONTEXT_SPAN, SignalReturns, context_registers

MAX_DEPTH = 256
# The walk reads the stack above the interrupted SP in one piece of at most this many bytes
# (clipped to the stack's area) and takes every saved word from it: one read through the door
# instead of two or three per frame (bench/profile.py).
STACK_WINDOW = 32 * 1024

# CALLEE_SAVED: registers a callee preserves (psABI), unchanged in the caller's frame unless
# the CFI says where they were saved — the timer's C handler walks by the same list.
# The frame-pointer prologue: push %ebp; mov %esp,%ebp (89 e5) / push %rbp; mov %rsp,%rbp.
PROLOGUE = {32: b"\x55\x89\xe5", 64: b"\x55\x48\x89\xe5"}


class Stack(NamedTuple):
    """Return addresses from the interrupted PC (first) out to the outermost frame reached;
    `truncated` says why the walk stopped early (None: it reached the thread's start)."""
    frames: tuple[int, ...]
    truncated: str | None


class Unwinder:
    """Unwinds the threads of one run; keeps each object's CFI table once it is read."""

    def __init__(self, door, fixup=None, learn=None):
        self.door = door
        # learn(process, lookup, rule): the timer's C handler is taught each rule a walk
        # takes, to walk the next ticks through the same frames itself (debug/timer.py).
        self.learn = learn
        # fixup(process, tid, address, sp) -> address: a tool that swapped return addresses
        # for its own landing (uretprobes) gives the real one back, as perf asks uprobes.
        self.fixup = fixup
        self._tables: dict[tuple, CallFrameTable] = {}
        # The CFI rule at each address unwound, for the image map it was found in: samples
        # walk through the same return sites again and again.
        self._map: tuple = ()
        self._version: tuple | None = None      # the door's image_map_version of _map
        self._rules: dict[int, object] = {}
        self.signals = SignalReturns(door)          # restorers met, for the same image map

    def begin(self, process) -> None:
        """A walk in `process` begins: forget the rules found under another image map."""
        version = self.door.image_map_version(process)
        if version == self._version:
            return
        self._version = version
        layout = tuple((m.name, m.base, m.end) for m in self.door.images(process))
        if layout != self._map:
            self._map, self._rules = layout, {}
            self.signals.forget()

    def rule_at(self, process, lookup: int):
        """The CFI rule in force at `lookup` in `process` (None: no object or no FDE covers
        it); raises CfiUnsupported for CFI it cannot read. Valid within one walk (begin)."""
        found = self._rules.get(lookup)
        if found is None:
            image = self.door.image_at(process, lookup)
            rule = self.table_for(image).rule_at(lookup) if image is not None else None
            found = self._rules[lookup] = (rule, _plain_form(rule))
        return found

    def signal_return_at(self, process, address: int, interrupted: bool):
        """The restorer (sigframe.SignalReturn) at `address` in `process`, an interrupted PC
        or a return address; None where there is none. For the symbolizer, which names a
        signal frame as such."""
        self.begin(process)
        cpu = self.door.cpu(process)
        return self.signals.at(process, cpu, cpu.arch.bits, address, interrupted)

    def table_for(self, image) -> CallFrameTable:
        key = (image.path, image.load_bias, image.bits)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = CallFrameTable(image)
        return table

    def unwind(self, process, registers: dict, *, max_depth: int = MAX_DEPTH, tid: int = 0) -> Stack:
        """The stack of the thread whose registers (names of emu/registers.py, the general
        ones and the IP) are `registers`, in `process`."""
        self.begin(process)
        walk = _Walk(self, process, registers, tid)
        return walk.run(max_depth)


class _Walk:
    def __init__(self, unwinder: Unwinder, process, registers: dict, tid: int = 0):
        self.unwinder, self.door, self.process, self.tid = unwinder, unwinder.door, process, tid
        self.bits = 64 if "rip" in registers else 32
        self.word = self.bits // 8
        prefix = "r" if self.bits == 64 else "e"
        self.ip, self.sp, self.bp = prefix + "ip", prefix + "sp", prefix + "bp"
        self.regs = dict(registers)
        self.cpu = self.door.cpu(process)
        self._mask = (1 << self.bits) - 1
        self.entry = self._entry_function()
        self._window_at, self._window = self.regs.get(self.sp), None
        self._interrupted: set[int] = set()     # frames whose PC is an interrupted one

    def run(self, max_depth: int) -> Stack:
        frames: list[int] = []
        interrupted = True      # the PC is where the thread was stopped, not a return address
        while len(frames) < max_depth:
            pc = self.regs.get(self.ip)
            if pc is None or pc == 0:
                return Stack(tuple(frames), None if frames else "no PC")
            frames.append(pc)
            if interrupted:
                self._interrupted.add(len(frames) - 1)
            lookup = pc if interrupted else pc - 1         # a return address is after its call
            if self.entry is not None and self.entry[0] <= pc < self.entry[1]:
                if self.entry[0] <= lookup and lookup + 1 < self.entry[1]:
                    self._learn(lookup, ("outermost", None))
                return Stack(tuple(frames), None)          # the program's entry: outermost
            signal = self.unwinder.signals.at(self.process, self.cpu, self.bits, pc, interrupted)
            try:
                if signal is not None:
                    step = self._step_signal(signal, lookup, interrupted)
                else:
                    step = self._step_cfi(lookup)
                    if step is None:
                        step = self._step_frame_pointer(pc, lookup, first=interrupted)
            except _Stop as stop:
                return self._stopped(frames, stop.reason)
            if step == "outermost":
                return Stack(tuple(frames), None)
            old_sp, self.regs = self.regs[self.sp], step
            fixup = self.unwinder.fixup
            if fixup is not None and self.regs.get(self.ip):
                self.regs[self.ip] = fixup(self.process, self.tid, self.regs[self.ip], self.regs[self.sp])
            # Out of a signal frame the SP is the interrupted one: above the frame the kernel
            # pushed, or on another stack altogether (sigaltstack), as gdb allows there.
            interrupted = signal is not None
            if not interrupted and self.regs.get(self.ip) and self.regs[self.sp] <= old_sp:
                return Stack(tuple(frames), f"stack pointer does not grow at {pc:#x}")
        return Stack(tuple(frames), f"deeper than {max_depth} frames")

    def _stopped(self, frames: list[int], reason: str) -> Stack:
        """The walk ends early at the last frame. A return address in no executable area is
        not a frame: the step to it read a word that is not one (glibc's i386 memcpy pushes
        %eax with no CFI saying so, and its FDE's CFA then points at the saved count)."""
        if len(frames) > 1 and len(frames) - 1 not in self._interrupted:
            area = self.door.area_at(self.process, frames[-1])
            if area is None or not area.perms & PROT_EXEC:
                address = frames.pop()
                reason = f"return address {address:#x} is not in code (after {frames[-1]:#x})"
        return Stack(tuple(frames), reason)

    # ---- signal frames ----------------------------------------------------------------------
    def _step_signal(self, signal, lookup: int, interrupted: bool) -> dict:
        """Out of a signal frame: every general register as the kernel saved it for
        sigreturn (sigframe.py), the IP the interrupted PC."""
        context = (self.regs[self.sp] + signal.context) & self._mask
        caller = context_registers(self._read(context, SIGCONTEXT_SPAN[self.bits]), self.bits)
        layout = SIGCONTEXT[self.bits]
        self._learn(lookup, ("signal", interrupted, self.sp, signal.context + layout[self.sp],
                             tuple((name, self.sp, signal.context + layout[name])
                                   for name in (self.ip, *CALLEE_SAVED[self.bits]))))
        return caller

    # ---- CFI --------------------------------------------------------------------------------
    def _step_cfi(self, lookup: int):
        try:
            rule, plain = self.unwinder.rule_at(self.process, lookup)
        except CfiUnsupported as exc:
            raise _Stop(f"CFI at {lookup:#x}: {exc}") from None
        if rule is None:
            return None
        if plain is not None and plain[0] in self.regs:
            self._learn(lookup, ("plain", *plain))
            return self._step_plain(plain)
        cfa = self._cfa(rule.cfa, lookup)
        return_rule = rule.saved.get(rule.return_register)
        if return_rule == ("undefined",):
            if rule.cfa[0] != "expression":
                self._learn(lookup, ("outermost", rule.cfa[0]))
            return "outermost"                  # the CFI's mark of the outermost frame
        if return_rule is None:
            raise _Stop(f"CFI at {lookup:#x} gives no return address")
        caller = {name: self.regs[name] for name in CALLEE_SAVED[self.bits] if name in self.regs}
        caller[self.sp] = cfa
        for name, how in rule.saved.items():
            value = self._saved_value(name, how, cfa, lookup)
            if value is None:
                caller.pop(name, None)
            else:
                caller[name] = value
        realigned = _realigned_form(rule, self.bits)
        if realigned is not None:
            self._learn(lookup, realigned)
        return caller                           # the return column is the IP (loader/cfi.py)

    def _learn(self, lookup: int, rule: tuple) -> None:
        """Teach the timer's C handler this step (it repeats it at later ticks), unless the
        program's entry function is at `lookup` or just after it: there the walk ends by the
        PC, not by the address looked up, and a return address and an interrupted PC would
        disagree."""
        learn = self.unwinder.learn
        if learn is None:
            return
        entry = self.entry
        if rule[0] in ("plain", "realigned") and entry is not None \
                and entry[0] <= lookup + 1 and lookup < entry[1]:
            return
        learn(self.process, lookup, rule)

    def _step_plain(self, plain: tuple) -> dict:
        """_step_cfi for the common rule (_plain_form): the same caller registers, without
        the general rule's dispatch (most of a sample's cost is here: bench/profile.py)."""
        cfa_register, cfa_offset, saved_at, lost = plain
        regs, mask = self.regs, self._mask
        cfa = (regs[cfa_register] + cfa_offset) & mask
        caller = {name: regs[name] for name in CALLEE_SAVED[self.bits] if name in regs}
        caller[self.sp] = cfa
        word = self._word
        for name, offset in saved_at:
            caller[name] = word((cfa + offset) & mask)
        for name in lost:
            caller.pop(name, None)
        return caller

    def _cfa(self, how: tuple, lookup: int) -> int:
        if how[0] == "expression":
            return self._evaluate(how[1], (), lookup)
        register, offset = how
        if register not in self.regs:
            raise _Stop(f"CFA register {register} unknown at {lookup:#x}")
        return (self.regs[register] + offset) & self._mask

    def _evaluate(self, ops, initial: tuple, lookup: int) -> int:
        try:
            return evaluate(ops, self.regs, self._word, self.bits, initial)
        except CfiUnsupported as exc:
            raise _Stop(f"CFI at {lookup:#x}: {exc}") from None
        except IndexError:
            raise _Stop(f"CFI at {lookup:#x}: malformed DWARF expression") from None

    def _saved_value(self, name: str, how: tuple, cfa: int, lookup: int) -> int | None:
        kind = how[0]
        if kind == "at-expression":
            return self._word(self._evaluate(how[1], (cfa,), lookup))
        if kind == "expression":
            return self._evaluate(how[1], (cfa,), lookup)
        if kind == "at":
            return self._word((cfa + how[1]) & self._mask)
        if kind == "value":
            return (cfa + how[1]) & self._mask
        if kind == "same":
            return self.regs.get(name)
        if kind == "register":
            return self.regs.get(how[1])
        if kind == "undefined":
            return None
        raise _Stop(f"CFI rule for {name} at {lookup:#x} is a DWARF expression")

    # ---- frame pointers ---------------------------------------------------------------------
    def _step_frame_pointer(self, pc: int, lookup: int, *, first: bool):
        bp = self.regs.get(self.bp)
        sp, word = self.regs[self.sp], self.word
        caller = {name: self.regs[name] for name in CALLEE_SAVED[self.bits] if name in self.regs}
        if first and self._frameless(pc):
            self._learn(lookup, ("no-frame", self.sp))     # the return address on the stack top
            caller.update({self.ip: self._word(sp), self.sp: sp + word})
            return caller
        if bp == 0:
            if not first:
                self._learn(lookup, ("zero-frame", self.bp))
            return "outermost"                              # the psABI's mark of the deepest frame
        start = self._function_start(lookup)
        if start is None:
            raise _Stop(f"no CFI and no symbol at {lookup:#x}")
        prologue = PROLOGUE[self.bits]
        if not self._read(start, len(prologue)) == prologue:
            raise _Stop(f"no CFI at {lookup:#x} and its function keeps no frame pointer")
        if first and pc == start:
            caller.update({self.ip: self._word(sp), self.sp: sp + word})      # no frame yet
        elif first and pc == start + 1:
            caller.update({self.ip: self._word(sp + word), self.sp: sp + 2 * word, self.bp: self._word(sp)})
        elif bp is None:
            raise _Stop(f"frame pointer unknown at {lookup:#x}")
        else:
            caller.update({self.ip: self._word(bp + word), self.sp: bp + 2 * word, self.bp: self._word(bp)})
        return caller

    def _frameless(self, pc: int) -> bool:
        """The interrupted instruction keeps no frame (frameless.py): a `ret`, an i386 PIC
        thunk, a PLT stub's jump."""
        try:
            code = self._read(pc, 4)
        except _Stop:                   # a `ret` may end its mapping
            return is_ret(self._read(pc, 1))
        return is_ret(code) or is_pic_thunk(code, self.bits) or (
            is_plt_jump(code, self.bits) and in_plt(self.door.image_at(self.process, pc), pc))

    def _function_start(self, address: int) -> int | None:
        image = self.door.image_at(self.process, address)
        symbol = image.symbols.function_at(address) if image is not None else None
        return symbol.addr if symbol is not None else None

    def _entry_function(self):
        image = getattr(self.process, "image", None)
        if image is None:
            return None
        symbol = image.symbols.function_at(image.entry)
        return (symbol.addr, symbol.addr + symbol.size) if symbol is not None else None

    # ---- memory -----------------------------------------------------------------------------
    def _read(self, address: int, size: int) -> bytes:
        window = self._stack_window()
        offset = address - self._window_at if window else -1
        if 0 <= offset and offset + size <= len(window):
            return window[offset:offset + size]
        try:
            return self.cpu.read(address, size)
        except MemoryAccessError:
            raise _Stop(f"cannot read {size} bytes at {address:#x}") from None

    def _stack_window(self) -> bytes:
        """The stack from the interrupted SP up (STACK_WINDOW), read at the first use."""
        if self._window is None:
            self._window = b""
            area = self.door.area_at(self.process, self._window_at) if self._window_at else None
            if area is not None:
                size = min(STACK_WINDOW, area.end - self._window_at)
                try:
                    self._window = self.cpu.read(self._window_at, size)
                except MemoryAccessError:
                    pass
        return self._window

    def _word(self, address: int) -> int:
        window = self._window
        if window:
            offset = address - self._window_at
            if 0 <= offset <= len(window) - self.word:
                return int.from_bytes(window[offset:offset + self.word], "little")
        return int.from_bytes(self._read(address, self.word), "little")


def _plain_form(rule) -> tuple | None:
    """The rule as (CFA register, CFA offset, ((register, CFA offset it is saved at), ...),
    (registers not recoverable, ...)) when it is that simple — the CFA a register plus an
    offset, the return address and every saved register at CFA + n — else None."""
    if rule is None or rule.cfa[0] == "expression":
        return None
    if rule.saved.get(rule.return_register, ("",))[0] != "at":
        return None
    saved_at, lost = [], []
    for name, how in rule.saved.items():
        if how[0] == "at":
            saved_at.append((name, how[1]))
        elif how[0] == "undefined":
            lost.append(name)
        else:
            return None
    return rule.cfa[0], rule.cfa[1], tuple(saved_at), tuple(lost)


class _Stop(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _realigned_form(rule, bits: int) -> tuple | None:
    """gcc's realigned frame as the timer's C handler takes it (i386 `main` and glibc's
    `__libc_start_call_main`, which `and $-16, %esp` and keep the old frame through a DRAP
    register): CFA = the word at register + n (`DW_OP_bregN n; DW_OP_deref`), and each saved
    register at CFA + n or at register + n (`DW_OP_bregN n`). ("realigned", register, n,
    ((saved register, base register or None for the CFA, n), ...)), else None."""
    ops = rule.cfa[1] if rule.cfa[0] == "expression" else ()
    if len(ops) != 2 or ops[1][0] != "DW_OP_deref" or register_offset(ops[0], bits) is None:
        return None
    base, offset = register_offset(ops[0], bits)
    saved = []
    for name, how in rule.saved.items():
        if how[0] == "at":
            saved.append((name, None, how[1]))
        elif how[0] == "at-expression" and len(how[1]) == 1 and register_offset(how[1][0], bits) is not None:
            saved.append((name, *register_offset(how[1][0], bits)))
        else:
            return None
    if rule.saved.get(rule.return_register, ("",))[0] != "at":
        return None
    return "realigned", base, offset, tuple(saved)

