"""Opening an inode reached without a path walk: a /proc/PID/fd/N magic link to a file with no
name left, or a file handle (open_by_handle_at), with open(2)'s checks of an existing file."""
from .constants import O_PATH, O_TRUNC
from .name_checks import check_open_existing, open_mask
from .node import Node, wants_write
from .openfile import OpenFile
from .permission import access_of


def open_node(node: Node, path: bytes, flags: int, proc, listing) -> OpenFile:
    """A new description of `node` named `path`; `listing` lists it if it is a directory."""
    check_open_existing(node, flags, creating=False)
    if not flags & O_PATH:
        access_of(proc).check(node.stat(), open_mask(flags))
    if flags & O_PATH or node.is_fifo:
        return OpenFile(path, flags, node.pin(), None)
    if node.is_dir:
        return OpenFile(path, flags, node.pin(), None, listing)
    handle = node.open_handle(flags)
    if flags & O_TRUNC and wants_write(flags) and node.is_regular:
        handle.truncate(0)
    return OpenFile(path, flags, node, handle)


def reopen(f, flags: int, proc):
    """Opening /proc/PID/fd/N of a file with no path: a pipe's or a socket's description
    itself, a regular file with no name left (O_TMPFILE, unlinked, memfd) a new description
    of its inode, as the magic link's jump to the file's dentry gives (nd_jump_link)."""
    node = getattr(f, "node", None)
    if node is None or not node.is_regular or flags & O_PATH:
        return f
    access_of(proc).check(node.stat(), open_mask(flags))
    handle = node.open_handle(flags)
    if flags & O_TRUNC and wants_write(flags):
        handle.truncate(0)
    return OpenFile(f.path, flags, node, handle)
