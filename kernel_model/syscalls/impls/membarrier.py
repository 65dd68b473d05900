"""membarrier (kernel/sched/membarrier.c): a memory barrier on every thread of the process or
of the system. The model runs one instruction stream at a time, whose stores every other
thread sees at once, so a barrier has nothing to order; what a program can observe is the
registration state of its mm (mm->membarrier_state, on the address space: a fork copies it,
exec starts from none) and the errors: EINVAL for an unknown command or flags (only
PRIVATE_EXPEDITED_RSEQ takes MEMBARRIER_CMD_FLAG_CPU), EPERM for a private expedited barrier
before its registration.
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

CMD_QUERY, CMD_GLOBAL, CMD_GLOBAL_EXPEDITED, CMD_REGISTER_GLOBAL_EXPEDITED = 0, 1, 2, 4
CMD_PRIVATE_EXPEDITED, CMD_REGISTER_PRIVATE_EXPEDITED = 8, 16
CMD_PRIVATE_EXPEDITED_SYNC_CORE, CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE = 32, 64
CMD_PRIVATE_EXPEDITED_RSEQ, CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ = 128, 256
CMD_GET_REGISTRATIONS = 512
CMD_FLAG_CPU = 1
# MEMBARRIER_CMD_BITMASK with CONFIG_ARCH_HAS_MEMBARRIER_SYNC_CORE and CONFIG_RSEQ (x86), no
# nohz_full CPU: every command but QUERY (the host's 6.18 answers 1023 too)
SUPPORTED = 1023

# include/linux/sched/mm.h: MEMBARRIER_STATE_*
PRIVATE_READY, PRIVATE, GLOBAL_READY, GLOBAL = 1, 2, 4, 8
SYNC_CORE_READY, SYNC_CORE, RSEQ_READY, RSEQ = 16, 32, 64, 128

# membarrier_get_registrations: the state bits that report each registration command
REGISTRATIONS = ((GLOBAL | GLOBAL_READY, CMD_REGISTER_GLOBAL_EXPEDITED),
                 (PRIVATE | PRIVATE_READY, CMD_REGISTER_PRIVATE_EXPEDITED),
                 (SYNC_CORE | SYNC_CORE_READY, CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE),
                 (RSEQ | RSEQ_READY, CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ))

# a private barrier command: the ready bit its registration sets
PRIVATE_BARRIERS = {CMD_PRIVATE_EXPEDITED: PRIVATE_READY,
                    CMD_PRIVATE_EXPEDITED_SYNC_CORE: SYNC_CORE_READY,
                    CMD_PRIVATE_EXPEDITED_RSEQ: RSEQ_READY}
# membarrier_register_private_expedited: (ready bit, bits set with it); the flavoured ones also
# set the plain PRIVATE bit, so GET_REGISTRATIONS reports REGISTER_PRIVATE_EXPEDITED with them
PRIVATE_REGISTRATIONS = {CMD_REGISTER_PRIVATE_EXPEDITED: (PRIVATE_READY, PRIVATE),
                         CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE: (SYNC_CORE_READY,
                                                                   PRIVATE | SYNC_CORE),
                         CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ: (RSEQ_READY, PRIVATE | RSEQ)}


def registrations(state: int) -> int:
    mask = 0
    for bits, command in REGISTRATIONS:
        if state & bits:
            mask |= command
    return mask


def _check_flags(cmd: int, flags: int) -> None:
    allowed = (0, CMD_FLAG_CPU) if cmd == CMD_PRIVATE_EXPEDITED_RSEQ else (0,)
    if flags not in allowed:
        raise GuestErrno(E.EINVAL)


@syscall("membarrier", args=(("cmd", K.INT), ("flags", K.HEX), ("cpu_id", K.INT)))
def sys_membarrier(ctx, cmd, flags, cpu_id):
    cmd, flags = ctx.int32(cmd), flags & 0xFFFFFFFF
    _check_flags(cmd, flags)
    space = ctx.space
    if cmd == CMD_QUERY:
        return SUPPORTED
    if cmd in (CMD_GLOBAL, CMD_GLOBAL_EXPEDITED):
        return 0
    if cmd == CMD_REGISTER_GLOBAL_EXPEDITED:
        space.membarrier_state |= GLOBAL | GLOBAL_READY
        return 0
    if cmd in PRIVATE_BARRIERS:
        if not space.membarrier_state & PRIVATE_BARRIERS[cmd]:
            raise GuestErrno(E.EPERM)
        return 0
    if cmd in PRIVATE_REGISTRATIONS:
        ready, bits = PRIVATE_REGISTRATIONS[cmd]
        if not space.membarrier_state & ready:
            space.membarrier_state |= bits | ready
        return 0
    if cmd == CMD_GET_REGISTRATIONS:
        return registrations(space.membarrier_state)
    raise GuestErrno(E.EINVAL)
