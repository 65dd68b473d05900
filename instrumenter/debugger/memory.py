"""Memory as the program has it, under the tool's patches (GDB's shadowing of breakpoints:
gdbserver's mem-break.c check_mem_read/check_mem_write, and the patent's process-image store).

The debug interface keeps every tool patch (kernel_model/debug/patches.py): its read_memory
shows the original bytes under each int3, LOCK prefix and jump, and its write_memory into a
patched range changes the saved original and leaves the patch in place. The debugger's own
breakpoints patch nothing (emu/code_breakpoints.py), so this layer only forwards; it is where
a relocation table's copies would be kept in step with a write (US 6,957,421, not yet). It also
shows, in a stack slot where a uretprobe put its landing, the return address the landing
stands for, so that GDB's unwinder (bt, finish, up) walks the program's own frames.
"""
import struct


class ShadowedMemory:
    def __init__(self, debug, session=None):
        self.debug = debug
        self.session = session

    def read(self, process, address: int, size: int) -> bytes:
        data = self.debug.read_memory(process, address, size)
        slots = self._return_slots(process, address, size)
        if not slots:
            return data
        out = bytearray(data)
        for slot, word in slots:
            for i, byte in enumerate(word):
                if address <= slot + i < address + size:
                    out[slot + i - address] = byte
        return bytes(out)

    def _return_slots(self, process, address: int, size: int) -> list[tuple[int, bytes]]:
        """The stack slots in [address, address+size) whose return address a uretprobe
        replaced with its landing (tracing/uretprobes.py's shadow stacks), each with the real
        return address: what a debugger unwinding the stack must read there (GDB's bt)."""
        returns = getattr(self.session, "returns", None)
        landing = returns.landings.get(process.space.serial) if returns is not None else None
        if landing is None:
            return []
        word = self.debug.arch(process).word
        fmt = "<I" if word == 4 else "<Q"
        slots = []
        for thread in self.debug.live_threads(process):
            for pending in returns.shadow.get(thread.tid, ()):
                if address - word < pending.sp < address + size:
                    held = self.debug.read_memory(process, pending.sp, word)
                    if struct.unpack(fmt, held)[0] == landing:
                        slots.append((pending.sp, struct.pack(fmt, pending.return_address)))
        return slots

    def write(self, process, address: int, data: bytes) -> None:
        self.debug.write_memory(process, address, data)
