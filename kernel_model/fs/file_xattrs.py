"""Extended attributes of open files that are no file system's inode in the model: pipes
(pipefs), sockets (sockfs), eventfds and the other anonymous inodes. Linux still walks
fs/xattr.c for them: xattr_permission on the inode's mode (a pipe is S_IFIFO, a socket
S_IFSOCK, an anonymous inode has no type bits: user.* is ENODATA to read and EPERM to write),
then the file system's handlers, which pipefs and anon_inodefs have none of (EOPNOTSUPP), and
no ACLs (EOPNOTSUPP); listxattr without a listxattr operation lists what the LSMs add, nothing
(vfs_listxattr: security_inode_listsecurity). sockfs has one handler and a listxattr
(net/socket.c sockfs_xattr_get, sockfs_listxattr): system.sockprotoname, the name of the
socket's protocol with its NUL ("TCP", "UNIX-STREAM"...), which nobody may set.
"""
from .. import errno as E
from ..errno import GuestErrno

SOCKPROTONAME = b"system.sockprotoname"


class FileInode:
    """What the xattr calls ask of an inode, for an open file `f` without a node."""

    is_symlink = is_dir = False

    def __init__(self, f):
        self._file = f
        name = getattr(f, "protocol_name", None)
        self.xattrs = SocketXattrs(name) if name is not None else None

    def stat(self):
        return self._file.stat()

    def xattrs_changed(self) -> None:
        """Nothing is ever stored."""


class SocketXattrs:
    keeps_acls = False

    def __init__(self, protocol_name: bytes):
        self._value = protocol_name + b"\0"

    def get(self, name: bytes) -> bytes:
        if name != SOCKPROTONAME:
            raise GuestErrno(E.EOPNOTSUPP)
        return self._value

    def set(self, name: bytes, value: bytes, flags: int) -> None:
        raise GuestErrno(E.EOPNOTSUPP)              # the handler has no set

    def remove(self, name: bytes) -> None:
        raise GuestErrno(E.EOPNOTSUPP)

    def names(self, privileged: bool) -> bytes:
        return SOCKPROTONAME + b"\0"
