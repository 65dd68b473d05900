"""personality(2) (kernel/exec_domain.c): set the execution domain and flags, return the old."""
from ...personality import PER_QUERY
from ..registry import syscall


@syscall("personality")
def sys_personality(ctx, persona):
    """The argument is an unsigned int: 0xffffffff (in any width) only reads. Linux stores any
    other value as it is (set_personality) and returns the old one."""
    old = ctx.proc.personality
    persona &= 0xFFFFFFFF
    if persona != PER_QUERY:
        ctx.proc.personality = persona
    return old
