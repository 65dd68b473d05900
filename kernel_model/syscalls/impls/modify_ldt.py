"""modify_ldt(2): read and write the process's LDT (arch/x86/kernel/ldt.c sys_modify_ldt; the
table itself: kernel_model/cpu/ldt.py).

func 0 reads the entries (none: 0 bytes; else bytecount, at most the table's 64 KiB, the part
past the entries zeroed), 2 reads the default LDT (zeros: 5 entries on i386, 128 bytes on
x86-64 kernel: the 32-bit kernel.s 5 entries are not modeled), 1 writes an entry in the old mode (the avl bit dropped, base and limit 0 clear it) and
0x11 in the new one (LDT_empty clears it); any other func is ENOSYS. A write needs exactly a
struct user_desc (EINVAL), readable (EFAULT), an entry number below 8192 and no contents 3
(a conforming code segment: EINVAL in the old mode, and in the new one unless not present).
The result is an int (the syscall's "unsigned long" cut to 32 bits: the ABI's).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...cpu.ldt import LDT_ENTRIES, LDT_ENTRY_SIZE, USER_DESC_SIZE, UserDesc
from ..kinds import K
from ..registry import syscall

DEFAULT_LDT_SIZE = 128        # read_default_ldt on a 64-bit kernel, compat tasks too


@syscall("modify_ldt", args=(("func", K.INT), ("ptr", K.PTR), ("bytecount", K.ULONG)))
def sys_modify_ldt(ctx, func, ptr, bytecount):
    try:
        return _modify_ldt(ctx, ctx.int32(func), ptr, bytecount)
    except GuestErrno as error:
        if ctx.abi == "x86_64":      # (unsigned int)ret: glibc's syscall() sees no error
            return -error.errno & 0xFFFFFFFF
        raise


def _modify_ldt(ctx, func: int, ptr: int, bytecount: int) -> int:
    if func == 0:
        return _read_ldt(ctx, ptr, bytecount)
    if func == 2:
        size = min(bytecount, DEFAULT_LDT_SIZE)
        ctx.write(ptr, bytes(size))
        return size
    if func in (1, 0x11):
        return _write_ldt(ctx, ptr, bytecount, oldmode=func == 1)
    raise GuestErrno(E.ENOSYS)


def _read_ldt(ctx, ptr: int, bytecount: int) -> int:
    table = ctx.proc.space.ldt.raw()
    if not table:
        return 0
    bytecount = min(bytecount, LDT_ENTRIES * LDT_ENTRY_SIZE)
    ctx.write(ptr, table[:bytecount].ljust(bytecount, b"\0"))
    return bytecount


def _write_ldt(ctx, ptr: int, bytecount: int, *, oldmode: bool) -> int:
    if bytecount != USER_DESC_SIZE:
        raise GuestErrno(E.EINVAL)
    info = UserDesc(ctx.read(ptr, USER_DESC_SIZE))
    if info.entry_number >= LDT_ENTRIES:
        raise GuestErrno(E.EINVAL)
    if info.contents == 3 and (oldmode or not info.seg_not_present):
        raise GuestErrno(E.EINVAL)
    if ctx.proc.arch == "i386":
        info.lm = 0                   # no such bit in a 32-bit kernel's user_desc
    if oldmode and not info.base and not info.limit or info.empty():
        desc = 0
    else:
        desc = info.descriptor(keep_avl=not oldmode)
    ctx.proc.space.ldt.install(info.entry_number, desc)
    return 0
