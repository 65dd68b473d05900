"""The GDB remote serial protocol's framing (GDB manual, "Overview" of the Remote Protocol).

A packet is `$payload#cs`, cs the modulo-256 sum of the payload's bytes as two hex digits. The
receiver answers `+` (good) or `-` (resend) until both sides agree on QStartNoAckMode. In
binary data (X packets, qXfer replies) `#`, `$`, `}` and `*` are escaped as `}` and the byte
XOR 0x20. A lone 0x03 outside a packet is an interrupt request (Ctrl-C). gdb never sends
run-length encoded packets; a stub may, and this one does not.
"""

INTERRUPT = 0x03
_ESCAPED = frozenset(b"#$}*")


def checksum(payload: bytes) -> int:
    return sum(payload) & 0xFF


def frame(payload: bytes) -> bytes:
    return b"$" + payload + b"#" + b"%02x" % checksum(payload)


def escape(data: bytes) -> bytes:
    out = bytearray()
    for byte in data:
        if byte in _ESCAPED:
            out += bytes((0x7D, byte ^ 0x20))
        else:
            out.append(byte)
    return bytes(out)


def unescape(data: bytes) -> bytes:
    out, it = bytearray(), iter(data)
    for byte in it:
        if byte == 0x7D:
            following = next(it, None)
            if following is None:
                raise ValueError("binary data ends with an escape byte")
            out.append(following ^ 0x20)
        else:
            out.append(byte)
    return bytes(out)


class PacketParser:
    """Bytes in, protocol events out: ("packet", payload), ("bad", payload) for a checksum
    mismatch, ("ack",), ("nack",) and ("interrupt",). Incomplete input is kept for the next
    feed; bytes between packets other than those are line noise and ignored."""

    def __init__(self):
        self._buffer = bytearray()
        self._in_packet = False

    def feed(self, data: bytes) -> list[tuple]:
        events = []
        for byte in data:
            if not self._in_packet:
                if byte == 0x24:                       # '$'
                    self._in_packet = True
                    self._buffer.clear()
                elif byte == 0x2B:
                    events.append(("ack",))
                elif byte == 0x2D:
                    events.append(("nack",))
                elif byte == INTERRUPT:
                    events.append(("interrupt",))
                continue
            self._buffer.append(byte)
            hash_at = self._buffer.find(b"#")
            if hash_at >= 0 and len(self._buffer) == hash_at + 3:
                payload = bytes(self._buffer[:hash_at])
                digits = bytes(self._buffer[hash_at + 1:])
                self._in_packet = False
                self._buffer.clear()
                try:
                    good = int(digits, 16) == checksum(payload)
                except ValueError:
                    good = False
                events.append(("packet", payload) if good else ("bad", payload))
        return events
