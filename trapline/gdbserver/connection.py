"""One GDB connection: stdin/stdout (`target remote | trapline gdbserver --stdio ...`) or a TCP
socket (`target remote HOST:PORT`), with acknowledgements until no-ack mode.

A reader thread parses everything GDB sends as it arrives, so that a Ctrl-C (a raw 0x03)
reaches the debugger while the guest runs: `on_interrupt` is called from that thread and may
only ask the guest to stop (Debugger.interrupt). Packets and acknowledgements go into a queue
the server's own thread takes them from.
"""
import os
import queue
import socket
import threading

from ..host_signals import interruptible
from .packets import PacketParser, frame

_CLOSED = ("closed",)


class ConnectionClosed(Exception):
    """GDB went away (end of file on the connection)."""


class Connection:
    def __init__(self, read_chunk, write_all, *, on_interrupt=None, close=None, log=None):
        self._read_chunk = read_chunk        # () -> bytes, b"" at end of file
        self._write_all = write_all          # (bytes) -> None
        self._close = close
        self.on_interrupt = on_interrupt
        self.log = log                       # callable(str) for --debug-protocol, or None
        self.ack_mode = True                 # we wait for GDB's acks of what we send
        self._reader_acks = True             # the reader acknowledges what GDB sends
        self._events: queue.Queue = queue.Queue()
        self.closed = False                  # GDB hung up (seen by the reader)
        self._reader = threading.Thread(target=self._read_loop, name="gdb-reader", daemon=True)
        self._reader.start()

    @classmethod
    def stdio(cls, **kwargs) -> "Connection":
        return cls(lambda: os.read(0, 65536), lambda data: _write_fd(1, data), **kwargs)

    @classmethod
    def accept(cls, host: str, port: int, *, on_listening=None, **kwargs) -> "Connection":
        """Listen on HOST:PORT and take the first connection (as gdbserver does)."""
        listener = socket.create_server((host, port), reuse_port=False)
        try:
            if on_listening is not None:
                on_listening(listener.getsockname()[1])
            with interruptible():            # Ctrl-C while no GDB comes
                sock, _ = listener.accept()
        finally:
            listener.close()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(lambda: sock.recv(65536), sock.sendall, close=sock.close, **kwargs)

    # ---- receiving -------------------------------------------------------------------------
    def _read_loop(self) -> None:
        parser = PacketParser()
        while True:
            try:
                data = self._read_chunk()
            except OSError:
                data = b""
            if not data:
                self.closed = True
                self._events.put(_CLOSED)
                return
            for event in parser.feed(data):
                if event[0] == "interrupt" and self.on_interrupt is not None:
                    self.on_interrupt()
                elif event[0] in ("packet", "bad") and self._reader_acks:
                    # Acknowledged on arrival, not when served: GDB resends a packet that is
                    # not acknowledged within its remotetimeout (2 s), and the guest may be
                    # starting or running for longer; a resent packet answered twice would
                    # shift every later reply by one. After QStartNoAckMode nothing GDB sends
                    # is acknowledged (its OK reply still is, by GDB).
                    self._write_all(b"+" if event[0] == "packet" else b"-")
                    if event[0] == "packet" and event[1] == b"QStartNoAckMode":
                        self._reader_acks = False
                self._events.put(event)

    def receive(self) -> bytes:
        """The next packet's payload (acknowledged in ack mode); interrupts that arrive while
        the guest is stopped mean nothing and are skipped."""
        while True:
            event = self._next_event()
            if event[0] == "packet":
                if self.log:
                    self.log(f"<- {event[1].decode('latin-1')}")
                return event[1]

    def _next_event(self) -> tuple:
        """The next thing GDB sent; ConnectionClosed once it hung up (and for every later
        call: the end of the connection stays in the queue)."""
        with interruptible():                # Ctrl-C while GDB says nothing
            event = self._events.get()
        if event is _CLOSED:
            self._events.put(_CLOSED)
            raise ConnectionClosed()
        return event

    # ---- sending ----------------------------------------------------------------------------
    def send(self, payload: bytes) -> None:
        """Send a packet; in ack mode, resend it until GDB acknowledges it."""
        if self.log:
            self.log(f"-> {payload[:200].decode('latin-1')}")
        packet = frame(payload)
        while True:
            self._write_all(packet)
            if not self.ack_mode:
                return
            if self._wait_ack():
                return

    def _wait_ack(self) -> bool:
        while True:
            event = self._next_event()
            if event[0] == "ack":
                return True
            if event[0] == "nack":
                return False
            if event[0] == "packet":                 # no ack came: GDB sent on; keep it
                self._events.put(event)
                return True

    def close(self) -> None:
        if self._close is not None:
            self._close()


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
