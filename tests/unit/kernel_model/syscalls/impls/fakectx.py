"""A SyscallContext over fake guest memory, a fake kernel (virtual clock, wakeup log, pipe
inode counter) and a real FdTable: the syscall code under test runs unchanged."""
from types import SimpleNamespace

from emu.memory import MemoryAccessError
from kernel_model.time.clock import VirtualClock
from kernel_model.fdtable import FdTable
from kernel_model.syscalls.context import SyscallContext
from kernel_model.memory.vm import PROT_READ, PROT_WRITE, AreaMap

BASE = 0x10000          # the one writable area
SIZE = 0x4000
READ_ONLY = 0x20000     # a read-only page


class FakeMemory:
    def __init__(self):
        self.areas = {BASE: bytearray(SIZE), READ_ONLY: bytearray(0x1000)}

    def _find(self, addr: int, size: int):
        for base, data in self.areas.items():
            if base <= addr and addr + size <= base + len(data):
                return base, data
        raise MemoryAccessError(addr, size)

    def read(self, addr: int, size: int) -> bytes:
        base, data = self._find(addr, size)
        return bytes(data[addr - base:addr - base + size])

    def write(self, addr: int, data: bytes) -> None:
        base, area = self._find(addr, len(data))
        area[addr - base:addr - base + len(data)] = data


class FakeVm:
    """The areas of a FakeMemory: READ_ONLY is read-only, the others (BASE and any a test
    plants) read-write."""

    def __init__(self, mem: FakeMemory):
        self.mem = mem

    def vma_at(self, addr: int):
        for base, data in self.mem.areas.items():
            if base <= addr < base + len(data):
                perms = PROT_READ if base == READ_ONLY else PROT_READ | PROT_WRITE
                return SimpleNamespace(end=base + len(data), perms=perms)
        return None

    allows = AreaMap.allows          # the real walk over this stand-in's areas


class FakeKernel:
    def __init__(self):
        self.clock = VirtualClock()
        self.woken: list = []
        self._ino = 1000

    def wakeup(self, channel) -> None:
        self.woken.append(channel)

    def next_pipe_ino(self) -> int:
        self._ino += 1
        return self._ino


def fake_ctx(abi: str = "x86_64") -> SyscallContext:
    mem = FakeMemory()
    space = SimpleNamespace(machine=SimpleNamespace(mem=mem), vm=FakeVm(mem))
    proc = SimpleNamespace(space=space, machine=space.machine, vm=space.vm, fds=FdTable())
    thread = SimpleNamespace(process=proc, sigmask=0, restart={}, saved_sigmask=None)
    return SyscallContext(FakeKernel(), thread, abi)
