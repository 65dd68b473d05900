"""Register and memory packets: g/G (all registers in target.xml's order), p/P (one), m/M/X
(memory, shown and written through the instrumentation: instrumenter/debugger/memory.py).
Values are little-endian hex, as the target's byte order. Mixed into GdbServer."""
from kernel_model.debug import MemoryFault
from instrumenter.debugger.registers import layout

from .packets import unescape

EFAULT = b"E0e"


class AccessPackets:
    def access(self, head: str, text: str, packet: bytes) -> bytes:
        thread = self.g_thread
        if thread is None:
            return b"E01"
        if head == "g":
            values = self.debugger.read_registers(thread)
            return "".join(_hex(values[r.name], r.size) for r in layout(self.arch)).encode()
        if head == "G":
            return self._write_all(thread, text[1:])
        if head == "p":
            return self._read_one(thread, int(text[1:], 16))
        if head == "P":
            number, _, value = text[1:].partition("=")
            return self._write_one(thread, int(number, 16), value)
        return self._memory(thread.process, head, text, packet)

    def _read_one(self, thread, number: int) -> bytes:
        regs = layout(self.arch)
        if number >= len(regs):
            return b"E01"
        reg = regs[number]
        return _hex(self.debugger.read_registers(thread)[reg.name], reg.size).encode()

    def _write_one(self, thread, number: int, value: str) -> bytes:
        regs = layout(self.arch)
        if number >= len(regs) or len(value) != 2 * regs[number].size:
            return b"E01"
        self.debugger.write_registers(thread, {regs[number].name: _value(value)})
        return b"OK"

    def _write_all(self, thread, data: str) -> bytes:
        changes, at = {}, 0
        for reg in layout(self.arch):
            piece = data[at:at + 2 * reg.size]
            if len(piece) < 2 * reg.size:
                break
            changes[reg.name] = _value(piece)
            at += 2 * reg.size
        self.debugger.write_registers(thread, changes)
        return b"OK"

    def _memory(self, process, head: str, text: str, packet: bytes) -> bytes:
        spec, _, payload = text[1:].partition(":")
        try:
            address, length = (int(x, 16) for x in spec.split(","))
        except ValueError:
            return b"E01"
        try:
            if head == "m":
                return self.debugger.read_memory(process, address, length).hex().encode()
            data = bytes.fromhex(payload) if head == "M" else unescape(packet[packet.index(b":") + 1:])
            if len(data) != length:
                return b"E01"
            if data:
                self.debugger.write_memory(process, address, data)
            return b"OK"
        except ValueError:
            return b"E01"
        except MemoryFault:                  # no page there: what ptrace's EFAULT says
            return EFAULT


def _hex(value: int, size: int) -> str:
    return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little").hex()


def _value(text: str) -> int:
    return int.from_bytes(bytes.fromhex(text), "little")
