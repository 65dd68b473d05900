"""A Landlock ruleset and its file (security/landlock/ruleset.c, syscalls.c ruleset_fops).

A ruleset is built by landlock_add_rule and copied into a layer by landlock_restrict_self;
rules added later do not reach a layer already made (landlock_merge_ruleset copies).
Path-beneath rules name a hierarchy by the absolute path of the fd they were given (Linux
ties them to the inode; the sandbox's paths are its overlay's, where no bind mount makes one
inode reachable by two names).
"""
from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_RDWR
from ..fs.eventfd import ANON_INODE_DEV, ANON_INODE_INO
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable


class Ruleset:
    """What a ruleset handles and what its rules allow, per hierarchy and per TCP port."""

    def __init__(self, handled_fs: int, handled_net: int, scoped: int):
        self.handled_fs = handled_fs
        self.handled_net = handled_net
        self.scoped = scoped
        self.path_rules: dict[bytes, int] = {}
        self.port_rules: dict[int, int] = {}

    def allow_beneath(self, path: bytes, access: int) -> None:
        # landlock_insert_rule: a second rule on the same object adds its rights
        self.path_rules[path] = self.path_rules.get(path, 0) | access

    def allow_port(self, port: int, access: int) -> None:
        self.port_rules[port] = self.port_rules.get(port, 0) | access


class RulesetFile(Unseekable):
    """anon_inode:[landlock-ruleset], opened O_RDWR (anon_inode_getfd in
    landlock_create_ruleset): reading or writing it is EINVAL (fop_dummy_read/write)."""
    is_tty = False

    def __init__(self, ruleset: Ruleset):
        self.ruleset = ruleset
        self.flags = O_RDWR
        self.path = self.proc_link = b"anon_inode:[landlock-ruleset]"
        self.closed = False

    def read(self, n: int) -> bytes:
        raise GuestErrno(E.EINVAL)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def poll_events(self) -> int:
        return 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
