"""memfd_create(2) and the seal commands of fcntl (mm/memfd.c; the files: fs/memfd.py).

The name (at most 249 bytes: NAME_MAX less "memfd:") only labels the file. MFD_CLOEXEC and
MFD_ALLOW_SEALING are modeled, MFD_NOEXEC_SEAL/MFD_EXEC accepted (the model does not exec a
memfd differently); MFD_HUGETLB makes a hugetlbfs file (memory/hugetlb.py) of the size its
MFD_HUGE_* bits ask (ENODEV for a size x86-64 lacks); any other bit is EINVAL.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_ACCMODE, O_RDWR, O_WRONLY
from ...fs.memfd import ALL_SEALS, F_SEAL_EXEC, F_SEAL_SEAL, F_SEAL_WRITE, MemFile
from ...memory.hugetlb import HUGE_MASK, HUGE_SHIFT, HugetlbFile, huge_size
from ..kinds import K
from ..registry import syscall

MFD_CLOEXEC, MFD_ALLOW_SEALING, MFD_HUGETLB, MFD_NOEXEC_SEAL, MFD_EXEC = 1, 2, 4, 8, 0x10
MFD_NAME_MAX_LEN = 255 - len("memfd:")
F_ADD_SEALS, F_GET_SEALS = 1033, 1034


@syscall("memfd_create", args=(("name", K.PATH), ("flags", K.HEX)))
def sys_memfd_create(ctx, name, flags):
    flags &= 0xFFFFFFFF
    known = MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC
    if flags & MFD_HUGETLB:                 # a size may be encoded (MFD_HUGE_SHIFT)
        known |= MFD_HUGETLB | HUGE_MASK << HUGE_SHIFT
    if flags & ~known:
        raise GuestErrno(E.EINVAL)
    if flags & MFD_NOEXEC_SEAL and flags & MFD_EXEC:
        raise GuestErrno(E.EINVAL)
    text = ctx.read_cstr(name, 4096)
    if len(text) > MFD_NAME_MAX_LEN:
        raise GuestErrno(E.EINVAL)
    if flags & MFD_HUGETLB:
        return ctx.proc.fds.install(_hugetlb_file(ctx, text, flags),
                                    cloexec=bool(flags & MFD_CLOEXEC))
    sealing = bool(flags & (MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL))
    f = ctx.kernel.fs.memfd(text, sealing)
    if flags & MFD_NOEXEC_SEAL:
        f.node.seals |= F_SEAL_EXEC
    return ctx.proc.fds.install(f, cloexec=bool(flags & MFD_CLOEXEC))


def _hugetlb_file(ctx, name: bytes, flags: int) -> HugetlbFile:
    """hugetlb_file_setup: a file of the size's hstate (ENODEV for a size x86-64 lacks)."""
    page_size = huge_size(flags)
    if page_size is None:
        raise GuestErrno(E.ENODEV)
    _HUGETLB_INODES[0] += 1
    return HugetlbFile(ctx.kernel.hugepages, name, page_size, _HUGETLB_INODES[0])


_HUGETLB_INODES = [0]        # the internal hugetlbfs mount's inode numbers, as handed out


def seal_fcntl(ctx, f, cmd: int, arg: int) -> int:
    """F_GET_SEALS / F_ADD_SEALS: EINVAL on a file that cannot be sealed. A new F_SEAL_WRITE is
    EBUSY while the file has a shared mapping that may be written (memfd_add_seals'
    mapping_deny_writable: VM_SHARED with VM_MAYWRITE, in any process, whatever its current
    protection), after the description, seal and F_SEAL_SEAL checks."""
    node = getattr(f, "node", None)
    if not isinstance(node, MemFile):
        raise GuestErrno(E.EINVAL)
    if cmd == F_GET_SEALS:
        return node.seals
    seals, writable = arg & 0xFFFFFFFF, f.flags & O_ACCMODE in (O_WRONLY, O_RDWR)
    if writable and not seals & ~ALL_SEALS and not node.seals & F_SEAL_SEAL and \
            seals & F_SEAL_WRITE and not node.seals & F_SEAL_WRITE and _writably_mapped(ctx, node):
        raise GuestErrno(E.EBUSY)
    node.add_seals(seals, writable)
    return 0


def _writably_mapped(ctx, node) -> bool:
    return any(vma.shared and vma.may_write and getattr(vma.file, "node", None) is node
               for proc in ctx.kernel.processes.values() if proc.space is not None
               for vma in proc.vm.vmas)
