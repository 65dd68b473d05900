"""mseal (mm/mseal.c): seal a range of the caller's areas against change (memory/seal.py); the
calls it guards check the seals themselves (memory.py)."""
from ...memory.seal import seal
from ..kinds import K
from ..registry import syscall


@syscall("mseal", args=(("start", K.PTR), ("len", K.ULONG), ("flags", K.HEX)))
def sys_mseal(ctx, start, length, flags):
    seal(ctx.proc.vm, start, length, flags, word_bits=8 * ctx.word)
    return 0
