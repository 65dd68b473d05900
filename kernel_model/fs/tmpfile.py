"""O_TMPFILE: an unnamed regular file in a directory's file system (open(2) since Linux 3.11).

fs/namei.c do_tmpfile() looks the path up as a directory (LOOKUP_DIRECTORY), and vfs_tmpfile()
asks write and search on it (inode_permission MAY_WRITE | MAY_EXEC) before the file system's
i_op->tmpfile makes an inode with no name (tmpfs: shmem_tmpfile; a file system without one
answers EOPNOTSUPP, which programs read as "O_TMPFILE not supported"). Without O_EXCL the
inode is I_LINKABLE: linkat(2) may give it a name, through linkat(fd, "", ..., AT_EMPTY_PATH) or
linkat(AT_FDCWD, "/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW); with O_EXCL it never gets one
(vfs_link: ENOENT for an inode with no link that is not I_LINKABLE). d_tmpfile() names its
dentry "#INO", so /proc/self/fd/N reads "DIR/#INO (deleted)".
"""
from .. import errno as E
from ..errno import GuestErrno
from .constants import O_CREAT, O_DIRECTORY, O_EXCL, O_TMPFILE_BIT
from .inode_flags import check_unchangeable
from .namei import Resolved
from .node import Node, wants_write
from .openfile import OpenFile
from .permission import MAY_EXEC, MAY_WRITE, Access

# include/uapi/asm-generic/fcntl.h: O_TMPFILE is __O_TMPFILE | O_DIRECTORY, and O_CREAT with it
# is refused, so that a kernel without O_TMPFILE (which ignores __O_TMPFILE) fails the open
# with EISDIR or ENOTDIR rather than making a named file.
O_TMPFILE_MASK = O_TMPFILE_BIT | O_DIRECTORY | O_CREAT


def check_tmpfile_flags(flags: int) -> None:
    """build_open_flags(): O_TMPFILE needs O_DIRECTORY, refuses O_CREAT, and needs write
    access in the access mode itself (O_TRUNC does not count): EINVAL otherwise."""
    if flags & O_TMPFILE_MASK != O_TMPFILE_BIT | O_DIRECTORY or not wants_write(flags):
        raise GuestErrno(E.EINVAL)


def open_tmpfile(r: Resolved, flags: int, mode: int, access: Access, umask: int = 0) -> OpenFile:
    """do_tmpfile() once the path is resolved: `mode` as asked, under the umask or the
    directory's default ACL (shmem_tmpfile and ext4_tmpfile make their inode as a create
    does: acl_inherit.py)."""
    if r.node is None:
        raise GuestErrno(E.ENOENT)
    if not r.node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    directory = r.node.stat()
    access.check(directory, MAY_WRITE | MAY_EXEC)
    from . import acl_inherit          # not at start-up
    mode, acls = acl_inherit.creation_mode(r.node, mode & 0o7777, umask, False)
    node = r.node.tmpfile(mode)
    acl_inherit.give_acls(node, acls)
    uid, gid, _ = access.new_owner(directory)       # inode_init_owner, as for a named file
    if (uid, gid) != (0, 0):
        node.chown(uid, gid)
    node.linkable = not flags & O_EXCL
    opened = OpenFile(tmpfile_path(r.path, node), flags, node, node.open_handle(flags))
    opened.unnamed = True
    return opened


def tmpfile_path(directory: bytes, node: Node) -> bytes:
    """The name d_tmpfile() gives the file's dentry, under the directory it was made in."""
    return directory.rstrip(b"/") + b"/#%d" % node.ino


def check_linkable(node: Node) -> None:
    """vfs_link(): an inode that lost its last name (or an O_TMPFILE one opened with O_EXCL)
    may not be given a new one."""
    if node.stat().nlink == 0 and not node.linkable:
        raise GuestErrno(E.ENOENT)
    check_unchangeable(node.stat().iflags)          # vfs_link: IS_APPEND || IS_IMMUTABLE
