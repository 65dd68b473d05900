"""What a Python probe action receives: who hit the probe, registers, arguments, memory.

Arguments follow the psABIs: x86-64 passes the first six integer arguments in rdi, rsi, rdx,
rcx, r8, r9 (System V AMD64 psABI 3.2.3); i386 cdecl passes them on the stack, the first at
[esp+4] at function entry (System V i386 psABI 2.2). At an offset inside a function the same
rules are applied to the current registers, which only hold at the entry.
"""
import struct
from functools import partial
from operator import itemgetter

X86_64_ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")


class ProbeContext(tuple):
    """One is built per hit, on the probe hot path, so it is a tuple: (kernel, thread, probe,
    address, retval, the door's CPU view of the thread's space), its fields read through C
    itemgetters. The hot path builds it with `new_context` (tuple.__new__: no Python frame,
    where a class with __init__ ran one with seven stores: a third of an int3 hit's Python
    time after the C hook, issue 31). It compares and hashes by identity, as an object."""
    __slots__ = ()

    def __new__(cls, kernel, thread, probe, address: int, retval: int | None = None, cpu=None):
        # through the door (kernel_model/debug/cpu.py); `cpu`: the view of the thread's space
        # a hot path keeps (tracing/entry_hit.py), which spares every hit the door's look-up
        if cpu is None:
            cpu = kernel.debug.cpu(thread.process)
        return tuple.__new__(cls, (kernel, thread, probe, address, retval, cpu))

    kernel = property(itemgetter(0))
    thread = property(itemgetter(1))
    probe = property(itemgetter(2))
    address = property(itemgetter(3))
    retval = property(itemgetter(4))
    _cpu = property(itemgetter(5))
    __eq__, __ne__, __hash__ = object.__eq__, object.__ne__, object.__hash__

    @property
    def process(self):
        return self[1].process

    def __repr__(self) -> str:
        return f"ProbeContext(tid={self[1].tid}, probe={self[2].spec.text!r}, address={self[3]:#x})"

    @property
    def pid(self) -> int:
        return self[1].process.pid

    @property
    def tid(self) -> int:
        return self.thread.tid

    @property
    def timestamp(self) -> int:
        """Virtual time: guest instructions executed in the run so far, counted exactly up to
        and including the instruction that raised this hit (emu/icount.py)."""
        return self._cpu.instructions_retired

    def register(self, name: str) -> int:
        return self._cpu.register(name)

    def registers(self) -> dict[str, int]:
        return self._cpu.registers().as_dict()

    def read(self, address: int, size: int) -> bytes:
        """The program's memory as the program has it: the tool's own patches (int3 bytes,
        jumps) read as the original bytes they replaced, as gdbserver shows memory under its
        breakpoints (the door keeps them: kernel_model/debug/patches.py)."""
        return self.kernel.debug.read_memory(self.process, address, size)

    def read_string(self, address: int, limit: int = 256) -> bytes:
        return self._cpu.read_cstr(address, limit)

    def arg(self, index: int) -> int:
        return _stack_or_register_argument(self._cpu, index)

    def args(self, count: int) -> tuple[int, ...]:
        """The first `count` argument words, read in one batch (a probe hit's hot path)."""
        return argument_words(self._cpu, count)

    def symbolize(self, address: int) -> str:
        return self.kernel.symbolize(self.process, address)


def argument_words(cpu, count: int) -> tuple[int, ...]:
    """The first `count` argument words of the thread stopped on `cpu` (the debug interface's
    view of its space), read in one batch: the record path of a probe hit calls this without
    building a ProbeContext."""
    bits = cpu.arch.bits
    if bits == 64 and count <= 6:
        return tuple(cpu.register_batch(X86_64_ARGUMENT_REGISTERS).read()[:count])
    if bits == 32:
        return struct.unpack(f"<{count}I", cpu.read(cpu.sp + 4, 4 * count))
    return tuple(_stack_or_register_argument(cpu, i) for i in range(count))


def argument_fetcher(cpu, count: int):
    """A callable returning what argument_words(cpu, count) returns, made once per space and
    count for a hot path (tracing/entry_hit.py): the x86-64 registers through one fetcher of
    the door (kernel_model/debug/cpu.py register_fetcher), i386's stack words with one
    precompiled struct."""
    if cpu.arch.bits == 64 and count <= 6:
        return cpu.register_fetcher(X86_64_ARGUMENT_REGISTERS[:count])
    if cpu.arch.bits == 32:
        unpack, size = struct.Struct(f"<{count}I").unpack, 4 * count
        return lambda: unpack(cpu.read(cpu.sp + 4, size))
    return lambda: argument_words(cpu, count)


def _stack_or_register_argument(cpu, index: int) -> int:
    if cpu.arch.bits == 64:
        if index < 6:
            return cpu.register(X86_64_ARGUMENT_REGISTERS[index])
        return struct.unpack("<Q", cpu.read(cpu.sp + 8 * (index - 6 + 1), 8))[0]
    return struct.unpack("<I", cpu.read(cpu.sp + 4 * (index + 1), 4))[0]



# new_context((kernel, thread, probe, address, retval, cpu)): a ProbeContext from its fields,
# `cpu` given, built by tuple.__new__ through a C partial (no Python frame: the hot path's)
new_context = partial(tuple.__new__, ProbeContext)
