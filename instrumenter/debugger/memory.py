"""Memory as the program has it, under the tool's patches (GDB's shadowing of breakpoints:
gdbserver's mem-break.c check_mem_read/check_mem_write, and the seed's process-image store).

Reads show the original bytes under every int3, LOCK prefix and jump patch of the session's
strategies (their breakpoint store keeps them); the debugger's own breakpoints patch nothing.
A write that covers patched bytes changes the saved original there (the patch stays, as
gdbserver keeps its breakpoint over a write to the shadowed byte) and memory elsewhere.
Once the debug interface keeps the patches itself (issue 15), its read_memory already shows
the originals and this layer only forwards.
"""


class ShadowedMemory:
    def __init__(self, debug, session=None):
        self.debug = debug
        self.session = session

    def _store(self, process):
        if self.session is None or self.session.trampolines is None:
            return None
        return self.session.trampolines.store_for(process)

    def read(self, process, address: int, size: int) -> bytes:
        store = self._store(process)
        if store is None:
            return self.debug.read_memory(process, address, size)
        return store.original_bytes(address, size)

    def write(self, process, address: int, data: bytes) -> None:
        store = self._store(process)
        sites = [] if store is None else [s for s in store._near(address, len(data))
                                           if s.address < address + len(data)
                                           and address < s.address + len(s.patch)]
        if not sites:
            self.debug.write_memory(process, address, data)
            return
        current = bytearray(self.debug.read_memory(process, address, len(data)))
        for i, byte in enumerate(data):
            at = address + i
            site = next((s for s in sites if s.address <= at < s.address + len(s.patch)), None)
            if site is None:
                current[i] = byte
            else:
                original = bytearray(site.original)
                original[at - site.address] = byte
                site.original = bytes(original)
        self.debug.write_memory(process, address, bytes(current))
