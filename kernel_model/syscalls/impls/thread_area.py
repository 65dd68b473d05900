"""i386 TLS: set_thread_area and get_thread_area (arch/x86/kernel/tls.c), a `struct user_desc`
(cpu/user_desc.py) in one of the three GDT TLS slots of the x86-64 kernel an i386 program runs
on (12..14, cpu/gdt.py). The slots are the thread's (thread.tls), written into the address
space's GDT when it runs (kernel.py's switch)."""
from ... import errno as E
from ...cpu.gdt import I386_TLS_COUNT, I386_TLS_FIRST
from ...cpu.user_desc import LAYOUT, UserDesc
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

TLS_SLOTS = range(I386_TLS_FIRST, I386_TLS_FIRST + I386_TLS_COUNT)


@syscall("set_thread_area", args=(("u_info", K.STRUCT),))
def sys_set_thread_area(ctx, u_info):
    """do_set_thread_area: read and check the whole descriptor (EINVAL), entry -1 takes the
    first empty slot (ESRCH if none) and writes its number back, then the slot must be one of
    the three (EINVAL); a segment register holding its selector is reloaded."""
    desc = UserDesc.unpack(ctx.read(u_info, LAYOUT.size))
    if not desc.okay():
        raise GuestErrno(E.EINVAL)
    entry = desc.entry
    if entry == -1:
        free = [i for i in TLS_SLOTS if not ctx.thread.tls.get(i, 0)]
        if not free:
            raise GuestErrno(E.ESRCH)
        entry = free[0]
        ctx.write(u_info, LAYOUT.pack(entry, 0, 0, 0)[:4])
    if entry not in TLS_SLOTS:
        raise GuestErrno(E.EINVAL)
    install(ctx, entry, desc.descriptor())
    return 0


def install(ctx, entry: int, desc: int) -> None:
    ctx.thread.tls[entry] = desc
    ctx.proc.space.gdt.set_entry(entry, desc)
    selector = (entry << 3) | 3
    if ctx.proc.machine.reg("gs") == selector:       # reload the cached descriptor (SDM 3.4.3)
        ctx.proc.machine.set_reg("gs", selector)


@syscall("get_thread_area", args=(("u_info", K.STRUCT),))
def sys_get_thread_area(ctx, u_info):
    """do_get_thread_area: the entry number is read first (EINVAL outside the three slots),
    the slot written back as fill_user_desc describes it (an empty one reads as cleared)."""
    entry = LAYOUT.unpack(ctx.read(u_info, LAYOUT.size))[0]
    if entry not in TLS_SLOTS:
        raise GuestErrno(E.EINVAL)
    ctx.write(u_info, UserDesc.of_descriptor(entry, ctx.thread.tls.get(entry, 0)).pack())
    return 0
