"""Signal frames of threads in a relocated copy (US 6,898,785: signal handlers see
original-space addresses; US 6,957,421: the relocation table both ways).

A signal that interrupts a copy's own instructions (a timer's SIGALRM between two of them, a
fault of a relocated load or store) would save a copy address in its frame, where the handler
reads it (ucontext's IP, a profiler's sample, a crash reporter's backtrace). The kernel asks
the door (kernel_model/debug/signal_pcs.py), and the door asks `translate`:

  * at a point where the registers are the program's at an original address — a piece's
    start (its call-outs not run yet), its relocated instruction's start (call-outs done),
    the call-out before a call, a kept jump back (the instruction done: the next original
    address) — the frame saves that original address;
  * half-way through a native part or a multi-instruction recipe: STEP (the door runs the
    thread on until such a point);
  * anywhere else (not a copy): not ours.

At sigreturn `resume` says where the thread goes on: at the same point of the same copy if it
is still mapped; else at the same point of the function's current copy (a probe added or
removed rebuilt it meanwhile); else at the original address (the function is no longer
relocated, or the tool detached): the original code does what the copy did.
"""
import functools

from .copy import Copy


class SignalFrames:
    def __init__(self, strategy):
        self.strategy = strategy

    def translate(self, thread, pc: int):
        table = self.strategy.tables_of(thread.process)
        copy = table.copy_at(pc) if table is not None else None
        piece = copy.piece_at(pc) if copy is not None else None
        if piece is None:
            return None
        if pc == piece.jump_back:
            role, original = "after", piece.next_original
        elif pc == piece.start:
            role, original = "start", piece.original
        elif pc == piece.insn_start:
            role, original = "insn", piece.original
        elif copy.callouts.get(pc, ("",))[0] == "call":
            role, original = "call", piece.original
        else:
            return self.strategy.debug.SIGNAL_PC_STEP
        stub = copy.stubs.get(piece.original) is piece
        return original, functools.partial(self.resume, copy, pc, piece.original, role, stub,
                                           original)

    def resume(self, copy: Copy, pc: int, piece_original: int, role: str, stub: bool,
               original: int, thread) -> int:
        table = self.strategy.tables_of(thread.process)
        if table is None:
            return original
        if any(c is copy for c in table.copies):
            return pc
        current = table.current.get(copy.function.start)
        at = None if current is None else _same_point(current, piece_original, role, stub)
        return original if at is None else at


def _same_point(current: Copy, piece_original: int, role: str, stub: bool) -> int | None:
    """The point of `current` that stands where `role` of the piece for `piece_original` stood
    in the old copy; None: the original code goes on from there as well."""
    if stub:            # an original-return continuation: one instruction, then original code
        piece = current.stubs.get(piece_original)
        return piece.start if piece is not None and role == "start" else None
    piece = current.by_original.get(piece_original)
    if piece is None:
        return None
    if role == "start":
        return piece.start
    if role == "insn":
        return piece.insn_start
    if role == "call":
        calls = [at for at, (kind, orig) in current.callouts.items()
                 if kind == "call" and orig == piece_original]
        return calls[0] if calls else None
    following = current.by_original.get(piece.next_original)     # "after": into the next one
    return following.start if following is not None else None
