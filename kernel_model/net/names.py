"""The names AF_UNIX sockets are bound to (net/unix/af_unix.c: unix_bind_bsd, unix_bind_abstract,
unix_find_other).

An abstract name lives in this table only and goes when its socket closes. A pathname is a
socket inode that bind() creates in the file system (S_IFSOCK, the overlay holds it like any
other node); the socket is found through that inode, not through the name: a renamed socket
file still reaches it, an unlinked one cannot be reached (ENOENT) though the socket stays
bound, and a socket file whose socket has closed refuses connections (ECONNREFUSED). The
inode outlives the socket, as on Linux, until someone unlinks it.
"""
from .. import errno as E
from ..errno import GuestErrno
from ..flags import O_PATH
from ..fs.constants import S_IFMT, S_IFSOCK
from .address import UnixName, autobind_name


class UnixNames:
    def __init__(self):
        self.abstract: dict[bytes, object] = {}
        self.inodes: dict[tuple[str, int], object] = {}
        self._autobind = 0

    # ---- bind ---------------------------------------------------------------------------------
    def bind_abstract(self, name: UnixName, sock) -> None:
        if name.raw in self.abstract:
            raise GuestErrno(E.EADDRINUSE)
        self.abstract[name.raw] = sock

    def autobind(self, sock) -> UnixName:
        while True:
            name = autobind_name(self._autobind)
            self._autobind += 1
            if name.raw not in self.abstract:
                self.abstract[name.raw] = sock
                return name

    def bind_path(self, fs, name: UnixName, mode: int, cwd: bytes, view, sock) -> tuple:
        """mknod the socket inode (EADDRINUSE when the name exists, as unix_bind_bsd turns
        EEXIST into it) and remember which socket it stands for; the inode's key."""
        try:
            fs.mknod(name.path, S_IFSOCK | mode, cwd, view)
        except GuestErrno as e:
            raise GuestErrno(E.EADDRINUSE if e.errno == E.EEXIST else e.errno) from None
        key = _inode_key(fs, name.path, cwd, view)
        self.inodes[key] = sock
        return key

    def unbind(self, name: UnixName | None, key: tuple | None, sock) -> None:
        if name is not None and name.abstract and self.abstract.get(name.raw) is sock:
            del self.abstract[name.raw]
        if key is not None and self.inodes.get(key) is sock:
            del self.inodes[key]

    # ---- lookup -------------------------------------------------------------------------------
    def find(self, fs, name: UnixName, cwd: bytes, view):
        """The socket bound to `name`, for connect and sendto (unix_find_other): ECONNREFUSED
        when nothing listens there, ENOENT for a path that does not exist."""
        if name.abstract:
            sock = self.abstract.get(name.raw)
        else:
            sock = self.inodes.get(_inode_key(fs, name.path, cwd, view))
        if sock is None:
            raise GuestErrno(E.ECONNREFUSED)
        return sock


def _inode_key(fs, path: bytes, cwd: bytes, view) -> tuple:
    """The (mount, inode number) a socket path names; ECONNREFUSED when it is not a socket
    (unix_find_bsd: !S_ISSOCK)."""
    node = fs.open(path, O_PATH, 0, cwd, view).node
    if node.stat().mode & S_IFMT != S_IFSOCK:
        raise GuestErrno(E.ECONNREFUSED)
    return (node.mount, node.ino)
