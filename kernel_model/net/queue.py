"""Receive queues. A stream socket's is a byte stream cut in segments (one per send), a
datagram or seqpacket socket's a list of whole messages; both are lists of Message.

Stream reads follow net/unix/af_unix.c, unix_stream_read_generic(): bytes run on from one
segment into the next, except that a read that took a segment's passed files stops after that
segment (the files belong to its first byte, and one read delivers one set), and, when the
reader asked for credentials (SO_PASSCRED), it stops before a segment from another sender.
"""
from collections import deque
from dataclasses import dataclass, field

from .message import Credentials, Message


@dataclass
class Taken:
    """What one read took: the bytes, the files passed with them, the sender's credentials
    and name (of the first segment or the message), and a datagram's full length."""
    data: bytes
    files: list = field(default_factory=list)
    creds: Credentials | None = None
    sender: object = None
    length: int = 0


class StreamQueue:
    def __init__(self):
        self.segments: deque[Message] = deque()
        self.buffered = 0

    def __bool__(self) -> bool:
        return self.buffered > 0

    def push(self, message: Message) -> None:
        self.segments.append(message)
        self.buffered += len(message.data)

    def take(self, n: int, *, peek: bool, split_creds: bool) -> Taken:
        out = bytearray()
        files: list = []
        first = self.segments[0] if self.segments else None
        for segment in list(self.segments):
            if len(out) >= n:
                break
            if split_creds and out and segment.creds != first.creds:
                break
            chunk = segment.remaining[:n - len(out)]
            out += chunk
            files = segment.files if peek else segment.take_files()
            if not peek:
                self._consume(segment, len(chunk))
            if files:
                break
        return Taken(bytes(out), list(files), first.creds if first else None, None, len(out))

    def _consume(self, segment: Message, count: int) -> None:
        segment.taken += count
        self.buffered -= count
        if not segment.remaining:
            self.segments.popleft()
            segment.settle()            # consume_skb: its sender's buffer has the room back

    def drop_all(self) -> None:
        for segment in self.segments:
            segment.drop()
        self.segments.clear()
        self.buffered = 0


class MessageQueue:
    def __init__(self):
        self.messages: deque[Message] = deque()

    def __bool__(self) -> bool:
        return bool(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def buffered(self) -> int:
        return sum(len(m.data) for m in self.messages)

    def push(self, message: Message) -> None:
        self.messages.append(message)

    def take(self, n: int, *, peek: bool, split_creds: bool = False) -> Taken:
        """One message: its first `n` bytes (the rest is lost unless peeking, as recv(2)
        says for datagrams), its files and sender."""
        message = self.messages[0]
        files = list(message.files) if peek else message.take_files()
        if not peek:
            self.messages.popleft()
        return Taken(message.data[:n], files, message.creds, message.sender, len(message.data))

    def drop_all(self) -> None:
        for message in self.messages:
            message.drop()
        self.messages.clear()
