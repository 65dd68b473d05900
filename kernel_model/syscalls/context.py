"""What a syscall implementation sees: the calling thread, its process, and guest memory.

Guest pointers are checked here: an address that is not mapped (or not writable, for output
buffers) gives EFAULT, as Linux's copy_to_user/copy_from_user do.
"""
import struct

from emu.memory import MemoryAccessError

from .. import errno as E
from ..errno import GuestErrno
from ..memory.vm import PROT_WRITE
from ..userfaultfd.fault import kernel_access


class SyscallContext:
    """One per ABI in the dispatcher, pointed at each call in turn (`bind`): building a new
    object per syscall cost as much as a one-byte read itself."""
    __slots__ = ("kernel", "abi", "word", "mask", "thread", "proc", "space", "mem", "vm", "frame")

    def __init__(self, kernel, thread, abi: str):
        self.kernel = kernel
        self.abi = abi                                   # "i386" or "x86_64": struct layouts
        self.word = 4 if abi == "i386" else 8
        self.mask = (1 << (8 * self.word)) - 1
        self.bind(thread, None)

    def bind(self, thread, frame) -> "SyscallContext":
        """Make this the context of a call by `thread`; `frame` is its trap frame (None for
        the `syscall` instruction, which builds none). What it keeps of the thread's process
        stays right while the thread and its address space are the same (the dispatcher then
        only sets `frame`): a thread never changes process, and a Space keeps its Machine,
        Memory and mapper for its whole life (exec and fork make a new Space)."""
        self.thread = thread
        self.proc = proc = thread.process
        self.space = space = proc.space
        self.mem = space.machine.mem
        self.vm = space.vm
        self.frame = frame
        return self

    def for_later(self) -> "SyscallContext":
        """A context of this call's thread alone, for what a call leaves to be done after it
        (a sleep's time left, written when a signal ends it): this one is rebound to every
        later call, of any process, so a closure keeping it would act on whoever called last."""
        return SyscallContext(self.kernel, self.thread, self.abi)

    # ---- integers --------------------------------------------------------------------------
    def signed(self, value: int) -> int:
        """Reinterpret a register word as a signed C int of the ABI's long size."""
        value &= self.mask
        return value - (1 << (8 * self.word)) if value >> (8 * self.word - 1) else value

    @staticmethod
    def int32(value: int) -> int:
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value & 0x80000000 else value

    # ---- the user state the call returns to -----------------------------------------------
    def set_user_state(self, *, pc: int, sp: int, flags: int) -> None:
        """Change where the caller resumes. Through the trap frame when the call came through
        a gate (IRET reloads from it), else in the Machine (the `syscall` path)."""
        machine = self.proc.machine
        if self.frame is not None:
            self.frame.ip, self.frame.sp, self.frame.flags = pc, sp, flags
        machine.pc = pc
        machine.sp = sp
        machine.set_reg("eflags" if machine.arch.bits == 32 else "rflags", flags)

    # ---- guest memory ----------------------------------------------------------------------
    def read(self, addr: int, size: int) -> bytes:
        """`size` bytes of user memory; EFAULT if any is unmapped, or for a negative size (a
        count taken as signed is, as the unsigned size_t Linux copies, past user space)."""
        if size == 0:
            return b""
        # AreaMap.readable's first test written out (nearly every buffer is in the area the
        # call before read from); a PROT_NONE page is mapped in the Machine, but not readable
        start, stop = self.vm.readable_window
        if addr == 0 or (not (start <= addr and addr + size <= stop)
                         and not self.vm.readable(addr, size)):
            raise GuestErrno(E.EFAULT)
        if self.space.userfaults:            # a page a userfaultfd must fill first
            kernel_access(self, addr, size, write=False)
        try:
            data = self.mem.read(addr, size)
        except MemoryAccessError:
            raise GuestErrno(E.EFAULT) from None
        return data

    def readable(self, addr: int, size: int) -> bool:
        """copy_from_user's view (AreaMap.readable): every byte in an area that is not PROT_NONE."""
        return self.vm.readable(addr, size)

    def write(self, addr: int, data: bytes) -> None:
        if not data:
            return
        if not self.writable(addr, len(data)):
            raise GuestErrno(E.EFAULT)
        self.mem.write(addr, data)

    def store(self, addr: int, data: bytes) -> None:
        """`write` into a range that `writable` has just accepted (read's buffer is checked
        before the file is read, so that a bad pointer consumes no data)."""
        self.mem.write(addr, data)

    def writable(self, addr: int, size: int) -> bool:
        if not self.vm.allows(addr, size, PROT_WRITE):
            return False
        if self.space.userfaults:            # a page a userfaultfd must fill first
            kernel_access(self, addr, size, write=True)
        return True

    def accessible_prefix(self, addr: int, size: int, prot: int) -> int:
        """How many of the `size` bytes from `addr` on a copy to or from the user moves before
        its first fault: the run of areas allowing `prot` from `addr` (copy_to_user and
        copy_from_user return what they could not copy, and read/write return the short
        count: mm/filemap.c filemap_read, generic_perform_write)."""
        end, at = addr + size, addr
        while at < end:
            vma = self.vm.vma_at(at)
            if vma is None or vma.perms & prot != prot:
                break
            at = vma.end
        return min(at, end) - addr

    def access_ok(self, addr: int, size: int) -> bool:
        """Linux's access_ok(): the range lies below the top of user space (whether it is
        mapped is found when it is copied)."""
        return 0 <= addr and addr + size <= self.vm.layout.user_top

    def read_cstr(self, addr: int, limit: int = 4096) -> bytes:
        if addr == 0:
            raise GuestErrno(E.EFAULT)
        try:
            s = self.mem.read_cstr(addr, limit + 1)
        except MemoryAccessError:
            raise GuestErrno(E.EFAULT) from None
        # strncpy_from_user faults on a page the process may not read (PROT_NONE, a guard
        # page): the host's bytes are there, the guest's right to read them is not.
        if not self.readable(addr, min(len(s) + 1, limit + 1)):
            raise GuestErrno(E.EFAULT)
        if len(s) > limit:
            raise GuestErrno(E.ENAMETOOLONG)
        return s

    def read_path(self, addr: int) -> bytes:
        path = self.read_cstr(addr, 4095)
        if not path:
            raise GuestErrno(E.ENOENT)
        return path

    def read_word(self, addr: int) -> int:
        return struct.unpack("<I" if self.word == 4 else "<Q", self.read(addr, self.word))[0]

    def write_word(self, addr: int, value: int) -> None:
        self.write(addr, struct.pack("<I" if self.word == 4 else "<Q", value & self.mask))

    def read_pointer_array(self, addr: int, limit: int = 65536) -> list[int]:
        """A NULL-terminated array of pointers (argv, envp)."""
        out = []
        while addr:
            p = self.read_word(addr + self.word * len(out))
            if p == 0:
                return out
            out.append(p)
            if len(out) > limit:
                raise GuestErrno(E.E2BIG)
        return out
