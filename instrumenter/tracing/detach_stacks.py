"""Detach, part 2: clean the call stacks (US 7,017,153: "cleans a call stack of the
process by unwinding the call stack and resetting the storage locations for return pointers
from the instrumented code space to uninstrumented code space").

For each live thread of a traced space, after its PC is out of tool code (detach_threads.py):
  1. unwinding: the profiler's walk (instrumenter/profiler/unwind.py: CFI from `.eh_frame`,
     frame pointers where there is none) goes up the stack; every return address it reads from
     a slot is checked, and one that points into the tool's code is replaced by the original
     return address it stands for — a uretprobe landing by the shadow-stack entry recorded for
     that very slot, a relocated return point by its strategy's `original_return`. The walk then
     goes on from the original address, so it gets through frames the tool had changed;
  2. the shadow stacks: every slot a pending uretprobe return still holds the landing in (a
     frame the walk did not reach: it stopped early, or the frame is below a signal frame), and
     any register holding the landing (musl's and glibc's vfork pop their return address into
     one), get the real return address (uretprobes.py `detach_child`, the fork-child cleaning);
  3. the saved PC of every pending signal frame that points into tool code (sigreturn would go
     back there) becomes its original address;
then the thread's shadow stack is dropped.
"""
from dataclasses import dataclass

from emu.registers import gpr_names

from ..profiler.unwind import MAX_DEPTH, Unwinder, _Walk


@dataclass(frozen=True)
class RewrittenSlot:
    pid: int
    tid: int
    slot: int            # the stack address of the return pointer
    tool: int            # what it held
    original: int        # what it holds now
    found_by: str        # "unwinding", "shadow stack", "register <name>", "signal frame"


class StackCleaner:
    def __init__(self, session, movers):
        self.session = session
        self.debug = session.debug
        self.movers = movers                 # detach_threads.ThreadMover: exact tool addresses
        self.unwinder = Unwinder(self.debug)

    def clean(self, thread) -> tuple[list[RewrittenSlot], list[str]]:
        """Every return pointer of `thread` into tool code reset; (what was rewritten, what
        could not be)."""
        rewritten = self._by_unwinding(thread)
        rewritten += self._by_shadow_stack(thread)
        signals, left = self._signal_frames(thread)
        self.session.returns.shadow.pop(thread.tid, None)
        return rewritten + signals, left

    # ---- 1. unwinding ----------------------------------------------------------------------
    def _by_unwinding(self, thread) -> list[RewrittenSlot]:
        process = thread.process
        arch = self.debug.arch(process)
        registers = {name: self.debug.read_register(thread, name) for name in gpr_names(arch)}
        registers[arch.pc] = self.debug.read_register(thread, arch.pc)
        walk = _TranslatingWalk(self.unwinder, process, registers,
                                lambda slot, value: self._original_return(thread, slot, value))
        walk.run(MAX_DEPTH)
        done = []
        for slot, tool, original in walk.translated:
            self.debug.write_memory(process, slot, original.to_bytes(arch.word, "little"))
            done.append(RewrittenSlot(process.pid, thread.tid, slot, tool, original, "unwinding"))
        return done

    def _original_return(self, thread, slot: int, value: int) -> int | None:
        """The original return address a tool return pointer at `slot` stands for."""
        process = thread.process
        returns = self.session.returns
        if returns.is_landing(process, value):
            for pending in returns.shadow.get(thread.tid) or ():
                if pending.sp == slot:
                    return pending.return_address
            return None
        for strategy in self.session.strategies.built():
            original = strategy.original_return(process, value)
            if original is not None:
                return original
        return None

    # ---- 2. the shadow stacks --------------------------------------------------------------
    def _by_shadow_stack(self, thread) -> list[RewrittenSlot]:
        returns = self.session.returns
        landing = returns.landings.get(thread.process.space.serial)
        registers, slots = returns.detach_child(thread, thread)
        process = thread.process
        done = [RewrittenSlot(process.pid, thread.tid, slot, landing, original, "shadow stack")
                for slot, original in slots]
        for name in registers:
            done.append(RewrittenSlot(process.pid, thread.tid, 0, landing,
                                      self.debug.read_register(thread, name), f"register {name}"))
        return done

    # ---- 3. signal frames ------------------------------------------------------------------
    def _signal_frames(self, thread) -> tuple[list[RewrittenSlot], list[str]]:
        process = thread.process
        returns = self.session.returns
        done, left = [], []
        for slot, pc, saved_sp in self.debug.signal_frame_pcs(thread):
            original = None
            if returns.is_landing(process, pc):
                pending = returns.returning(thread, saved_sp)
                original = pending.return_address if pending is not None else None
            elif self.movers.addrmap.lookup(process, pc) is not None:
                original = self.movers.original_of(process, pc)
            else:
                continue                                   # the program's own code
            if original is None:
                left.append(f"tid {thread.tid} of pid {process.pid}: a signal frame returns "
                            f"to {pc:#x}, half-way through tool code")
                continue
            self.debug.set_signal_frame_pc(thread, slot, original)
            done.append(RewrittenSlot(process.pid, thread.tid, slot, pc, original, "signal frame"))
        return done, left

    def unsettled_signal_frames(self, thread) -> list[str]:
        """Signal frames that would return half-way into tool code (checked before anything
        is changed: the detach waits for them, detach.py)."""
        process = thread.process
        left = []
        for _, pc, _ in self.debug.signal_frame_pcs(thread):
            if self.session.returns.is_landing(process, pc):
                continue
            if self.movers.addrmap.lookup(process, pc) is not None \
                    and self.movers.original_of(process, pc) is None:
                left.append(f"tid {thread.tid} of pid {process.pid}: a signal frame returns "
                            f"to {pc:#x}, half-way through tool code")
        return left


class _TranslatingWalk(_Walk):
    """The profiler's walk, reading every stack word through `translate(slot, value)`: a
    return pointer into tool code is read as the original return address (and remembered, to
    be written back), so the walk continues through frames the tool changed."""

    def __init__(self, unwinder, process, registers, translate):
        super().__init__(unwinder, process, registers)
        self.translate = translate
        self.translated: list[tuple[int, int, int]] = []     # (slot, tool value, original)

    def _word(self, address: int) -> int:
        value = super()._word(address)
        original = self.translate(address, value)
        if original is None:
            return value
        if all(slot != address for slot, _, _ in self.translated):
            self.translated.append((address, value, original))
        return original
