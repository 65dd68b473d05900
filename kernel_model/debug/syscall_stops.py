"""What a tool sees of a thread stopped at a syscall event, besides the call's name and
arguments (kernel_model/debug/): the ABI the call uses and the caller's memory read the way a
tracer reads it. Part of the debug interface, as PTRACE_GET_SYSCALL_INFO (the call's arch) and
PTRACE_PEEKDATA / process_vm_readv (memory, an error instead of a fault) are part of ptrace.
"""
from emu.memory import MemoryAccessError


class SyscallStops:
    @staticmethod
    def syscall_abi(thread) -> str:
        """"i386" or "x86_64": the table the call `thread` is making comes from, valid inside
        its syscall_entry/syscall_exit events. `int 0x80` from 64-bit code is an i386 call, as
        Linux's syscall_get_arch answers from the thread's TS_COMPAT status."""
        return thread.syscall_abi

    @staticmethod
    def peek(process, address: int, size: int) -> bytes | None:
        """`size` bytes of `process`'s memory at `address`, None if any of them is unmapped
        (PTRACE_PEEKDATA's EIO: a tracer shows such an argument as an address)."""
        try:
            return process.space.machine.mem.read(address, size)
        except MemoryAccessError:
            return None

    @staticmethod
    def peek_string(process, address: int, limit: int) -> bytes | None:
        """The bytes at `address` up to (without) a NUL, at most `limit` of them when no NUL
        comes first; None if the string runs into unmapped memory first."""
        try:
            return process.space.machine.mem.read_cstr(address, limit)
        except MemoryAccessError:
            return None

    @staticmethod
    def threads(process) -> list:
        """Every thread of `process`'s current image in creation order, exited ones included
        (live_threads gives those still running)."""
        return list(process.threads)
