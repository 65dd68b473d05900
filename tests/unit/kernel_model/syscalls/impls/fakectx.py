"""A SyscallContext over fake guest memory, a fake kernel (virtual clock, wakeup log, pipe
inode counter) and a real FdTable: the syscall code under test runs unchanged."""
from types import SimpleNamespace

from emu.memory import MemoryAccessError
from kernel_model.time.clock import VirtualClock
from kernel_model.fdtable import FdTable
from kernel_model.syscalls.context import SyscallContext
from kernel_model.memory.vm import PROT_READ, PROT_WRITE, AreaMap
from kernel_model.process.task_flags import TaskFlags

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
    """The areas of a FakeMemory: READ_ONLY is read-only, every other one (a test may add
    and remove its own) readable and writable."""

    def __init__(self, mem: FakeMemory | None = None):
        self.mem = mem

    def vma_at(self, addr: int):
        if BASE <= addr < BASE + SIZE:
            return SimpleNamespace(end=BASE + SIZE, perms=PROT_READ | PROT_WRITE)
        if READ_ONLY <= addr < READ_ONLY + 0x1000:
            return SimpleNamespace(end=READ_ONLY + 0x1000, perms=PROT_READ)
        for base, data in (self.mem.areas.items() if self.mem is not None else ()):
            if base <= addr < base + len(data):
                return SimpleNamespace(end=base + len(data), perms=PROT_READ | PROT_WRITE)
        return None

    allows = AreaMap.allows          # the real walks over this stand-in's areas
    readable = AreaMap.readable_walk     # a test changes the areas behind any window's back
    readable_window = (0, 0)             # (so it keeps none: ctx.read's first test misses)


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
    space = SimpleNamespace(machine=SimpleNamespace(mem=mem), vm=FakeVm(mem), userfaults=[])
    proc = SimpleNamespace(space=space, machine=space.machine, vm=space.vm, fds=FdTable())
    thread = SimpleNamespace(process=proc, sigmask=0, restart={}, saved_sigmask=None,
                             task_flags=TaskFlags())
    return SyscallContext(FakeKernel(), thread, abi)
