"""The userfaultfd ioctls (fs/userfaultfd.c userfaultfd_ioctl and the calls it makes), each in
Linux's order of checks. `ctx` is the calling syscall's context, `uffd` the file."""
import struct

from .. import errno as E
from ..errno import GuestErrno
from ..memory.layout import PAGE
from .abi import (API, API_IOCTLS, FEATURES, RANGE, RANGE_IOCTLS, UFFD_API, UFFDIO_API,
                  UFFDIO_COPY, UFFDIO_COPY_MODE_DONTWAKE, UFFDIO_COPY_MODE_WP, UFFDIO_REGISTER,
                  UFFDIO_REGISTER_MODE_MINOR, UFFDIO_REGISTER_MODE_MISSING,
                  UFFDIO_REGISTER_MODE_WP, UFFDIO_UNREGISTER, UFFDIO_WAKE, UFFDIO_WRITEPROTECT,
                  UFFDIO_WRITEPROTECT_MODE_DONTWAKE, UFFDIO_WRITEPROTECT_MODE_WP,
                  UFFDIO_ZEROPAGE, UFFDIO_ZEROPAGE_MODE_DONTWAKE, WP_RANGE_IOCTLS)
from .registration import Registration, fill_missing, unprotect

MMAP_MIN_ADDR = 0x10000           # vm.mmap_min_addr's default


def uffd_ioctl(ctx, uffd, request: int, arg: int) -> int:
    """userfaultfd_ioctl on `uffd` (context.py UserfaultCtx): every command but UFFDIO_API
    needs the handshake done (EINVAL);
    an unknown one is ENOTTY (-ENOIOCTLCMD)."""
    if request == UFFDIO_API:
        return _api(ctx, uffd, arg)
    handler = COMMANDS.get(request)
    if handler is None:
        raise GuestErrno(E.ENOTTY)
    if uffd.features is None:
        raise GuestErrno(E.EINVAL)
    return handler(ctx, uffd, arg)


def _api(ctx, uffd, arg: int) -> int:
    """userfaultfd_api: api must be UFFD_API (EINVAL), the features asked among those offered
    (EINVAL), once per file (EINVAL); the offer is written back, or zeroes on an error."""
    api, features, _ = API.unpack(ctx.read(arg, API.size))
    error = None
    if api != UFFD_API:
        error = E.EINVAL
    else:
        ctx.write(arg, API.pack(UFFD_API, FEATURES, API_IOCTLS))
        if features & ~FEATURES or uffd.features is not None:
            error = E.EINVAL
    if error is not None:
        ctx.write(arg, bytes(API.size))
        raise GuestErrno(error)
    uffd.features = features
    return 0


def _range(ctx, start: int, length: int) -> int:
    """validate_range: page aligned, not empty, above mmap_min_addr, inside user space
    (EINVAL); the range's end."""
    top = ctx.vm.layout.user_top
    if start % PAGE or length % PAGE or not length or start < MMAP_MIN_ADDR or start >= top \
            or length > top - start:
        raise GuestErrno(E.EINVAL)
    return start + length


def _register(ctx, uffd, arg: int) -> int:
    """userfaultfd_register: a mode of MISSING and WP (MINOR needs shmem or hugetlbfs: EINVAL
    here, as for an anonymous area), the range, then its areas: at least one, each private
    anonymous memory (EINVAL), none registered with another userfaultfd (EBUSY). Pages not
    touched yet lose their Machine pages so that their first access faults (missing)."""
    start, length, mode, _ = struct.unpack("<4Q", ctx.read(arg, 32))
    if not mode or mode & ~(UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP) or \
            mode & UFFDIO_REGISTER_MODE_MINOR:
        raise GuestErrno(E.EINVAL)
    end = _range(ctx, start, length)
    areas = ctx.vm.vmas_overlapping(start, end)
    if not areas or any(vma.file is not None or vma.shared for vma in areas):
        raise GuestErrno(E.EINVAL)          # vma_can_userfault: anonymous private memory
    for other in ctx.space.userfaults:
        if other is not uffd and any(r.start < end and start < r.end for r in other.ranges):
            raise GuestErrno(E.EBUSY)
    _drop_ranges(uffd, start, end)
    uffd.ranges.append(Registration(start, end, mode, set()))
    if uffd not in ctx.space.userfaults:
        ctx.space.userfaults.append(uffd)
    if mode & UFFDIO_REGISTER_MODE_MISSING:
        _unback_untouched(ctx, start, end)
    ioctls = WP_RANGE_IOCTLS if mode & UFFDIO_REGISTER_MODE_WP else RANGE_IOCTLS
    ctx.write(arg + 24, struct.pack("<Q", ioctls))
    return 0


def _unback_untouched(ctx, start: int, end: int) -> None:
    """A page the process never touched has no page table entry on Linux: its first access
    is a missing-page fault. Here its Machine page goes (Memory.resident tells which)."""
    mem = ctx.mem
    for lo, hi in ctx.vm.backed_parts(start, end):
        for i, present in enumerate(mem.resident(lo, hi - lo)):
            if not present & 1:
                mem.unmap(lo + i * PAGE, PAGE)


def _drop_ranges(uffd, start: int, end: int) -> None:
    """Cut [start, end) out of the file's registered ranges."""
    kept = []
    for reg in uffd.ranges:
        if reg.end <= start or reg.start >= end:
            kept.append(reg)
            continue
        if reg.start < start:
            kept.append(Registration(reg.start, start, reg.mode,
                                     {p for p in reg.protected if p < start}))
        if reg.end > end:
            kept.append(Registration(end, reg.end, reg.mode,
                                     {p for p in reg.protected if p >= end}))
    uffd.ranges = kept


def _unregister(ctx, uffd, arg: int) -> int:
    """userfaultfd_unregister: the range's registrations go, its faulting threads are woken;
    protected pages are writable again."""
    start, length = RANGE.unpack(ctx.read(arg, RANGE.size))
    end = _range(ctx, start, length)
    for reg in uffd.ranges:
        unprotect(ctx.space, reg, start, end)
    _drop_ranges(uffd, start, end)
    fill_missing(ctx.space, start, end)
    uffd.wake(start, end)
    return 0


def _wake(ctx, uffd, arg: int) -> int:
    start, length = RANGE.unpack(ctx.read(arg, RANGE.size))
    uffd.wake(start, _range(ctx, start, length))
    return 0


def _fill(ctx, uffd, dst: int, length: int, source) -> int:
    """mfill_atomic: each page of [dst, dst+length) must lie in a range of this file
    registered for missing pages (ENOENT) and be missing (EEXIST), then gets `source(i)`'s
    bytes; the bytes filled, or the first page's error."""
    done = 0
    while done < length:
        page = dst + done
        reg = uffd.registration_at(page)
        vma = ctx.vm.vma_at(page)
        error = None
        if reg is None or not reg.mode & UFFDIO_REGISTER_MODE_MISSING or vma is None:
            error = E.ENOENT
        elif not ctx.mem.unbacked(page, PAGE):
            error = E.EEXIST
        if error is not None:
            if done:
                return done
            raise GuestErrno(error)
        try:
            data = source(done)             # EFAULT before the page is made
        except GuestErrno:
            if done:
                return done
            raise
        ctx.mem.map(page, PAGE, vma.perms)
        ctx.mem.write(page, data)
        done += PAGE
    return done


def _copy(ctx, uffd, arg: int) -> int:
    """userfaultfd_copy: src inside user space, dst a valid range (EINVAL), known modes only;
    the pages filled from src (EFAULT when it cannot be read), `copy` set to the bytes done or
    the error, the faulting threads woken unless DONTWAKE; EAGAIN for a partial copy."""
    dst, src, length, mode = struct.unpack("<4Q", ctx.read(arg, 32))
    top = ctx.vm.layout.user_top
    if length % PAGE or not length or src < MMAP_MIN_ADDR or src >= top or length > top - src:
        raise GuestErrno(E.EINVAL)          # validate_unaligned_range: src need not be aligned
    _range(ctx, dst, length)
    if mode & ~(UFFDIO_COPY_MODE_DONTWAKE | UFFDIO_COPY_MODE_WP):
        raise GuestErrno(E.EINVAL)
    return _finish_fill(ctx, uffd, arg + 32, dst, length, mode & UFFDIO_COPY_MODE_DONTWAKE,
                        lambda done: ctx.read(src + done, PAGE))


def _zeropage(ctx, uffd, arg: int) -> int:
    start, length, mode = struct.unpack("<3Q", ctx.read(arg, 24))
    _range(ctx, start, length)
    if mode & ~UFFDIO_ZEROPAGE_MODE_DONTWAKE:
        raise GuestErrno(E.EINVAL)
    return _finish_fill(ctx, uffd, arg + 24, start, length,
                        mode & UFFDIO_ZEROPAGE_MODE_DONTWAKE, lambda done: bytes(PAGE))


def _finish_fill(ctx, uffd, result_at: int, dst: int, length: int, dontwake: int, source) -> int:
    try:
        done = _fill(ctx, uffd, dst, length, source)
    except GuestErrno as err:
        ctx.write(result_at, struct.pack("<q", -err.errno))
        raise
    ctx.write(result_at, struct.pack("<q", done))
    if not dontwake:
        uffd.wake(dst, dst + done)
    if done != length:
        raise GuestErrno(E.EAGAIN)
    return 0


def _writeprotect(ctx, uffd, arg: int) -> int:
    """userfaultfd_writeprotect: the range, known modes, not WP with DONTWAKE (EINVAL); every
    page must lie in a range registered for write protection (ENOENT). Protecting takes the
    pages' write permission away in the Machine; unprotecting gives it back and wakes the
    faulting threads unless DONTWAKE."""
    start, length, mode = struct.unpack("<3Q", ctx.read(arg, 24))
    end = _range(ctx, start, length)
    wp, dontwake = mode & UFFDIO_WRITEPROTECT_MODE_WP, mode & UFFDIO_WRITEPROTECT_MODE_DONTWAKE
    if mode & ~(UFFDIO_WRITEPROTECT_MODE_WP | UFFDIO_WRITEPROTECT_MODE_DONTWAKE) or \
            wp and dontwake:
        raise GuestErrno(E.EINVAL)
    regs = []
    for page in range(start, end, PAGE):
        reg = uffd.registration_at(page)
        if reg is None or not reg.mode & UFFDIO_REGISTER_MODE_WP:
            raise GuestErrno(E.ENOENT)
        regs.append((page, reg))
    for page, reg in regs:
        if wp:
            reg.protected.add(page)
            vma = ctx.vm.vma_at(page)
            if not ctx.mem.unbacked(page, PAGE):
                ctx.mem.protect(page, PAGE, vma.perms & ~2)        # PROT_WRITE off
        else:
            unprotect(ctx.space, reg, page, page + PAGE)
    if not wp and not dontwake:
        uffd.wake(start, end)
    return 0


COMMANDS = {
    UFFDIO_REGISTER: _register,
    UFFDIO_UNREGISTER: _unregister,
    UFFDIO_WAKE: _wake,
    UFFDIO_COPY: _copy,
    UFFDIO_ZEROPAGE: _zeropage,
    UFFDIO_WRITEPROTECT: _writeprotect,
}
