"""mlock, mlock2, munlock, mlockall, munlockall and mincore (mm/mlock.c, mm/mincore.c).

The model has no paging out, but pages come into being when first touched, as Linux's do at
their first fault: mincore reports resident the pages the guest has touched (their host pages
exist: emu/memory.py Memory.resident), and mlock, mlock2 without MLOCK_ONFAULT and
mlockall(MCL_CURRENT) fault every page of the range in first (mm/mlock.c __mm_populate; LTP
mincore03, mlock201). Locking also sets the areas'
VM_LOCKED (Vma.locked: VmLck in /proc/PID/status, msync's EBUSY). Modeled too are the calls'
checks: page rounding, the range being mapped (ENOMEM), the flags (EINVAL), and
RLIMIT_MEMLOCK, counting what is locked already, for a caller without CAP_IPC_LOCK (ENOMEM
past it, EPERM with a limit of 0).
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall
from .process import RLIM_INFINITY

PAGE = 4096
RLIMIT_MEMLOCK = 8
DEFAULT_MEMLOCK = 8 << 20                # Linux 6.x's MLOCK_LIMIT (8 MiB)
CAP_IPC_LOCK = 14
MLOCK_ONFAULT = 1
MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT = 1, 2, 4


def _pages(ctx, addr: int, length: int) -> tuple[int, int]:
    """The page range [start, end) of addr..addr+length (start rounded down, end up)."""
    start = addr & ~(PAGE - 1)
    end = (addr + length + PAGE - 1) & ~(PAGE - 1)
    return start, end


def _mapped(ctx, start: int, end: int) -> bool:   # mincore's check
    addr = start
    while addr < end:
        vma = ctx.proc.vm.vma_at(addr)
        if vma is None:
            return False
        addr = vma.end
    return True


def _memlock_limit(ctx) -> int:
    return ctx.proc.rlimits.get(RLIMIT_MEMLOCK, (DEFAULT_MEMLOCK, DEFAULT_MEMLOCK))[0]


def _check_lock(ctx, size: int) -> None:
    """can_do_mlock() and the RLIMIT_MEMLOCK check of do_mlock: `size` more bytes locked."""
    if ctx.proc.creds.capable(CAP_IPC_LOCK):
        return
    limit = _memlock_limit(ctx)
    if limit == 0:
        raise GuestErrno(E.EPERM)
    if limit != RLIM_INFINITY and size > limit:
        raise GuestErrno(E.ENOMEM)


def _newly_locked(vm, start: int, end: int) -> int:
    """The bytes of [start, end) that are mapped and not locked yet: what a lock of the
    range adds to mm->locked_vm (do_mlock subtracts count_mm_mlocked_page_nr)."""
    return sum(min(v.end, end) - max(v.start, start) for v in vm.vmas
               if v.start < end and v.end > start and not v.locked)


def _lock(ctx, addr: int, length: int, locking: bool, populate: bool = True) -> int:
    """mlock/munlock: VM_LOCKED on the pages of the range (mm/mlock.c apply_vma_lock_flags),
    which /proc/PID/status counts as VmLck; a lock without MLOCK_ONFAULT faults the pages in."""
    vm = ctx.proc.vm
    start, end = _pages(ctx, addr & ctx.mask, length & ctx.mask)
    if locking:
        _check_lock(ctx, vm.locked_bytes() + _newly_locked(vm, start, end))
    if end > start:
        vm.areas_covering(start, end)                  # ENOMEM for a hole
        vm.set_flags(start, end, locked=locking)
        if locking and populate:
            _populate(vm, start, end)
    return 0


def _populate(vm, start: int, end: int) -> None:
    """__mm_populate: the pages of the range's accessible areas are faulted in (a PROT_NONE
    area's are not: populate_vma_page_range skips what cannot be accessed)."""
    for vma in vm.areas_covering(start, end):
        if vma.perms:
            lo, hi = max(vma.start, start), min(vma.end, end)
            vm.machine.mem.populate(lo, hi - lo)


@syscall("mlock", args=(("addr", K.PTR), ("len", K.ULONG)))
def sys_mlock(ctx, addr, length):
    return _lock(ctx, addr, length, True)


@syscall("mlock2", args=(("addr", K.PTR), ("len", K.ULONG), ("flags", K.HEX)))
def sys_mlock2(ctx, addr, length, flags):
    if flags & ~MLOCK_ONFAULT:
        raise GuestErrno(E.EINVAL)
    return _lock(ctx, addr, length, True, populate=not flags & MLOCK_ONFAULT)


@syscall("munlock", args=(("addr", K.PTR), ("len", K.ULONG)))
def sys_munlock(ctx, addr, length):
    return _lock(ctx, addr, length, False)


def _lock_all(vm, flags: int) -> None:
    """apply_mlockall_flags: MCL_FUTURE locks the areas made from now on (mm->def_flags),
    MCL_CURRENT every area there is; flags 0 (munlockall) unlocks both."""
    vm.lock_future = bool(flags & MCL_FUTURE)
    if flags & MCL_FUTURE and not flags & MCL_CURRENT:
        return
    for vma in list(vm.vmas):
        vm.rename_area(vma, locked=bool(flags & MCL_CURRENT))
        if flags & MCL_CURRENT and not flags & MCL_ONFAULT and vma.perms:
            vm.machine.mem.populate(vma.start, vma.end - vma.start)


@syscall("mlockall", args=(("flags", K.HEX),))
def sys_mlockall(ctx, flags):
    flags = ctx.int32(flags)
    if not flags or flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) \
            or flags == MCL_ONFAULT:
        raise GuestErrno(E.EINVAL)
    if flags & MCL_CURRENT:
        _check_lock(ctx, ctx.proc.vm.mapped_bytes())
    elif not ctx.proc.creds.capable(CAP_IPC_LOCK) and _memlock_limit(ctx) == 0:
        raise GuestErrno(E.EPERM)
    _lock_all(ctx.proc.vm, flags)
    return 0


@syscall("munlockall", args=())
def sys_munlockall(ctx):
    _lock_all(ctx.proc.vm, 0)
    return 0


@syscall("mincore", args=(("addr", K.PTR), ("length", K.ULONG), ("vec", K.PTR)))
def sys_mincore(ctx, addr, length, vec):
    """One byte a page, bit 0 set: resident. An unaligned address is EINVAL, a range past
    user space or with a hole ENOMEM, a bad vector EFAULT."""
    if addr % PAGE:
        raise GuestErrno(E.EINVAL)
    start, end = _pages(ctx, addr, length)
    if not ctx.access_ok(start, end - start):
        raise GuestErrno(E.ENOMEM)
    if not _mapped(ctx, start, end):
        raise GuestErrno(E.ENOMEM)
    ctx.write(vec, ctx.mem.resident(start, end - start))
    return 0
