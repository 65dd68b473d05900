"""brk, mmap/mmap2, munmap, mprotect, madvise, mremap.

munmap/mprotect/mremap change mappings that the running code may sit in, so they run outside
Unicorn's hooks (docs/unicorn.md item 8).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...memory.layout import PAGE
from ...images import record_library_mapping, record_unmapping
from ...fs.memfd import NO_WRITES
from ...memory.advice import madvise
from ...memory.file_fault import pages_of_file
from ...memory.file_map import check_file_map
from ...memory.hugetlb import MAP_HUGETLB, HugetlbFile, check_huge_edges, map_huge
from ...memory.remap import MREMAP_FIXED, mremap
from ...memory.remap_file import remap_file_pages
from ...memory.seal import refuse_sealed, refuse_sealed_discard
from ...memory.vm import (MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, MAP_SHARED_VALIDATE,
                          PROT_EXEC, PROT_MASK, PROT_WRITE)
from ...personality import heap_prot, implied_prot
from ..kinds import K, Ret
from ..registry import syscall

MAP_TYPE = 0x0F


@syscall("brk", args=(("addr", K.PTR),), returns=Ret.HEX)
def sys_brk(ctx, addr):
    return ctx.proc.vm.brk(addr, prot=heap_prot(ctx.proc.personality))


def _mmap(ctx, addr, length, prot, flags, fd, offset):
    """ksys_mmap_pgoff, then do_mmap (mm/mmap.c), in their order: the offset's alignment
    (x86-64's sys_mmap and i386's old_mmap), the fd (fget: EBADF before any other check, LTP
    mmap08 maps a closed fd with length 0), the length, the map type, then the file's checks."""
    if offset % PAGE:
        raise GuestErrno(E.EINVAL)
    f = None if flags & MAP_ANONYMOUS else ctx.proc.fds.get_usable(ctx.int32(fd))
    huge = isinstance(f, HugetlbFile) or f is None and flags & MAP_HUGETLB
    if f is not None and flags & MAP_HUGETLB and not huge:
        raise GuestErrno(E.EINVAL)          # MAP_HUGETLB of a file not on hugetlbfs
    if prot & ~PROT_MASK & ~0x03000000:          # PROT_GROWSDOWN/UP are accepted
        raise GuestErrno(E.EINVAL)
    prot = implied_prot(ctx.proc.personality, prot)
    if not length:
        raise GuestErrno(E.EINVAL)          # do_mmap checks the length before the file
    if flags & MAP_TYPE not in (MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE):
        raise GuestErrno(E.EINVAL)
    if flags & MAP_FIXED:
        refuse_sealed(ctx.proc.vm, addr, length)        # mm/mseal.c: no mapping over a seal
    if huge:                                # memory/hugetlb.py
        return map_huge(ctx, ctx.kernel.hugepages, addr, length, prot & PROT_MASK, flags,
                        offset, f)
    data, name, backing = b"", b"", None
    shared = flags & MAP_TYPE in (MAP_SHARED, MAP_SHARED_VALIDATE)
    if f is not None:
        check_file_map(f, prot, flags)
        name = f.path
        data, backing = _file_contents(ctx, f, prot, shared, offset, length)
    start = ctx.proc.vm.mmap(addr, length, prot & PROT_MASK, flags, data=data, name=name,
                             offset=offset, backing=backing,
                             may_write=_may_write(f, shared),
                             file=_mapped_file(f, backing))
    if name and ctx.proc.vm.vma_at(start).perms & PROT_EXEC:
        record_library_mapping(ctx.kernel, ctx.proc, start, offset, f)   # ld.so, dlopen
    return start


def _mapped_file(f, backing):
    """The area's vm_file as the fault path needs it: a shared mapping's file with its page
    cache pages, a private mapping's if it is a regular file (a fault past its end is SIGBUS,
    memory/file_fault.py); a device's private mapping (/dev/zero) has no end to fault past."""
    if backing is not None:
        return f
    return f if f is not None and f.stat().mode & 0o170000 == 0o100000 else None


def _may_write(f, shared: bool) -> bool:
    """VM_MAYWRITE: not for a shared map of a file opened read-only (do_mmap) nor of a memfd
    sealed against writes (memfd_check_seals_mmap), so mprotect cannot add PROT_WRITE."""
    if f is None or not shared:
        return True
    return f.writable and not getattr(getattr(f, "node", None), "seals", 0) & NO_WRITES


def _file_contents(ctx, f, prot: int, shared: bool, offset: int, length: int):
    """(bytes, shared backing) of a file mapping: a private one gets the bytes, a shared one
    the file's pages in the page cache — except a character device's (/dev/zero), whose
    shared mapping is new anonymous shared memory each time (mm/shmem.c shmem_zero_setup)."""
    own = getattr(f, "mmap_backing", None)
    if own is not None:                     # a file's own pages (io_uring_mmap); shared only
        if not shared:
            raise GuestErrno(E.EINVAL)
        own(offset, length)                 # EINVAL for an offset or a size it has not
        return b"", lambda size: own(offset, size)
    if not shared:
        return ctx.kernel.page_cache.cached(f, offset, f.pread(length, offset)), None
    if prot & PROT_WRITE and getattr(f.node, "seals", 0) & NO_WRITES:
        raise GuestErrno(E.EPERM)           # memfd_check_seals_mmap: sealed against writes
    if f.stat().mode & 0o170000 == 0o020000:
        return b"", None
    # One copy of the file's pages for every process that maps them (page_cache.py), for the
    # pages that hold a byte of the file: the others get theirs at a fault once the file has
    # grown over them, or are SIGBUS (memory/file_fault.py)
    return b"", lambda size: ctx.kernel.page_cache.backing(f, offset, pages_of_file(f, offset, size))


@syscall("mmap", args=(("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT),
                       ("flags", K.MAP_FLAGS), ("fd", K.FD), ("offset", K.MMAP_OFFSET)),
         returns=Ret.HEX)
def sys_mmap(ctx, addr, length, prot, flags, fd, offset):
    if ctx.abi == "i386":
        # old_mmap (i386 nr 90): one pointer to struct mmap_arg_struct of six words
        addr, length, prot, flags, fd, offset = struct.unpack("<6I", ctx.read(addr, 24))
    return _mmap(ctx, addr, length, prot, flags, fd, offset)


@syscall("mmap2", args=(("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT),
                        ("flags", K.MAP_FLAGS), ("fd", K.FD), ("pgoffset", K.MMAP_PGOFF)),
         returns=Ret.HEX)
def sys_mmap2(ctx, addr, length, prot, flags, fd, pgoffset):
    return _mmap(ctx, addr, length, prot, flags, fd, pgoffset * PAGE)


@syscall("munmap", args=(("addr", K.PTR), ("length", K.ULONG)), outside_hook=True)
def sys_munmap(ctx, addr, length):
    if 0 < length and addr % PAGE == 0:
        check_huge_edges(ctx.vm, addr, addr + length)               # EINVAL inside a huge page
        refuse_sealed(ctx.proc.vm, addr, length)
        ctx.kernel.page_cache.sync_mapped(ctx.mem, addr, length)    # the file sees the stores
    ctx.proc.vm.munmap(addr, length)
    record_unmapping(ctx.kernel, ctx.proc, addr, addr + length)    # dlclose: the object is gone
    _drop_shm_attachments(ctx, addr, addr + length)
    return 0


def _drop_shm_attachments(ctx, lo: int, hi: int) -> None:
    """A SysV shm attachment whose pages are all unmapped now is detached, as by shmdt
    (ipc/shm.c shm_close runs when its last area goes): nattch drops, and a segment marked
    for removal goes with its last attachment. A partly unmapped one stays attached."""
    vm = ctx.proc.vm
    for start, segment in list(ctx.proc.shm_attached.items()):
        end = start + segment.mapped_size
        if start < hi and end > lo and vm.is_free(start, end):
            del ctx.proc.shm_attached[start]
            segment.nattch -= 1
            segment.dtime = ctx.kernel.clock.realtime_ns() // 10**9      # (sysv_msg's now_seconds)
            segment.lpid = ctx.proc.pid
            (ctx.proc.ipc_ns or ctx.kernel.ipc).detached(segment)   # process/namespaces.py


MS_ASYNC, MS_INVALIDATE, MS_SYNC = 1, 2, 4


@syscall("msync", args=(("addr", K.PTR), ("length", K.ULONG), ("flags", K.HEX)))
def sys_msync(ctx, addr, length, flags):
    """mm/msync.c: the range must be page aligned, mapped throughout (ENOMEM), with MS_ASYNC
    or MS_SYNC but not both, not MS_INVALIDATE on locked pages (EBUSY); the shared file pages
    in it are written back to their files."""
    if addr % PAGE or flags & ~(MS_ASYNC | MS_INVALIDATE | MS_SYNC) or \
            flags & MS_ASYNC and flags & MS_SYNC:
        raise GuestErrno(E.EINVAL)
    end = addr + ((length + PAGE - 1) & ~(PAGE - 1))
    if end < addr:
        raise GuestErrno(E.ENOMEM)
    areas = ctx.proc.vm.areas_covering(addr, end)             # ENOMEM for a hole
    if flags & MS_INVALIDATE and any(vma.locked for vma in areas):
        raise GuestErrno(E.EBUSY)           # msync: locked pages cannot be invalidated
    if end > addr:
        ctx.kernel.page_cache.sync_mapped(ctx.mem, addr, end - addr)
    return 0


@syscall("mprotect", args=(("addr", K.PTR), ("length", K.ULONG), ("prot", K.PROT)),
         outside_hook=True)
def sys_mprotect(ctx, addr, length, prot):
    if prot & ~PROT_MASK & ~0x03000000:
        raise GuestErrno(E.EINVAL)
    check_huge_edges(ctx.vm, addr, addr + length)
    refuse_sealed(ctx.proc.vm, addr, length)
    ctx.proc.vm.mprotect(addr, length, implied_prot(ctx.proc.personality, prot & PROT_MASK))
    return 0


@syscall("madvise", args=(("addr", K.PTR), ("length", K.ULONG), ("advice", K.MADVISE)))
def sys_madvise(ctx, addr, length, advice):
    refuse_sealed_discard(ctx.proc.vm, addr, length, ctx.int32(advice))
    madvise(ctx.proc.vm, addr, length, ctx.int32(advice))     # memory/advice.py
    return 0


@syscall("mremap", args=(("old_address", K.PTR), ("old_size", K.ULONG), ("new_size", K.ULONG),
                         ("flags", K.MREMAP_FLAGS), ("new_address", K.PTR)),
         returns=Ret.HEX, outside_hook=True)
def sys_mremap(ctx, old_addr, old_size, new_size, flags, new_addr):
    refuse_sealed(ctx.proc.vm, old_addr, old_size)
    if flags & MREMAP_FIXED:
        refuse_sealed(ctx.proc.vm, new_addr, new_size)
    return mremap(ctx.proc.vm, old_addr, old_size, new_size, flags, new_addr,
                  ctx.space.missing_watched)


@syscall("remap_file_pages", args=(("start", K.PTR), ("size", K.ULONG), ("prot", K.PROT),
                                   ("pgoff", K.ULONG), ("flags", K.MAP_FLAGS)), outside_hook=True)
def sys_remap_file_pages(ctx, start, size, prot, pgoff, flags):
    return remap_file_pages(ctx.proc.vm, ctx.kernel.page_cache, start, size, prot, pgoff, flags)
