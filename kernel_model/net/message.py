"""What one send puts in a receive queue (Linux's sk_buff with its unix_skb_parms): the bytes,
the open files of an SCM_RIGHTS message, the sender's credentials (SCM_CREDENTIALS) and, for
datagrams, the sender's name (what recvfrom reports).

Files in flight are open file descriptions held by the message, as Linux's scm_fp_list holds
struct file references: they stay open while queued, even after the sender closed its fds,
and a message dropped unread (its socket closed) lets them go.
"""
from dataclasses import dataclass, field

from ..fdtable import release_file, retain_file
from .address import UnixName


@dataclass(frozen=True)
class Credentials:
    """struct ucred: pid, uid, gid."""
    pid: int
    uid: int
    gid: int


@dataclass
class Message:
    data: bytes
    creds: Credentials
    files: list = field(default_factory=list)
    sender: UnixName | None = None
    taken: int = 0                      # stream segments: bytes already read from the front
    origin: object = None               # the sending socket, whose SO_SNDBUF it is charged to
    cost: int = 0                       # ...and how much of it

    def __post_init__(self):
        for f in self.files:
            retain_file(f)

    @property
    def remaining(self) -> bytes:
        return self.data[self.taken:]

    def take_files(self) -> list:
        """Hand the files to the receiver (who installs them); the message no longer holds them."""
        files, self.files = self.files, []
        return files

    def settle(self) -> None:
        """Out of the receive queue: the sender's buffer has the room back."""
        if self.origin is not None:
            self.origin.in_flight -= self.cost
            self.origin = None

    def drop(self) -> None:
        """Never received: release the files it carried."""
        self.settle()
        for f in self.take_files():
            release_file(f)
