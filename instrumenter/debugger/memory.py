"""Memory as the program has it, under the tool's patches (GDB's shadowing of breakpoints:
gdbserver's mem-break.c check_mem_read/check_mem_write, and the seed's process-image store).

The debug interface keeps every tool patch (kernel_model/debug_patches.py): its read_memory
shows the original bytes under each int3, LOCK prefix and jump, and its write_memory into a
patched range changes the saved original and leaves the patch in place. The debugger's own
breakpoints patch nothing (emu/code_breakpoints.py), so this layer only forwards; it is where
a relocation table's copies would be kept in step with a write (seed 003, not yet).
"""


class ShadowedMemory:
    def __init__(self, debug, session=None):
        self.debug = debug
        self.session = session

    def read(self, process, address: int, size: int) -> bytes:
        return self.debug.read_memory(process, address, size)

    def write(self, process, address: int, data: bytes) -> None:
        self.debug.write_memory(process, address, data)
