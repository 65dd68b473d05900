"""Path resolution, chroot-style (Linux fs/namei.c, with the guest root as the process root).

The walk keeps the chain of directories from the guest root to the current one, so `..` pops a
directory and can never climb above the root (as for a chrooted process, `/..` is `/`). A
symlink's text is spliced into the remaining path: an absolute target restarts from the guest
root, a relative one continues from the symlink's directory. No host path is ever built from
the text, so nothing can point outside the root. After MAXSYMLINKS followed links the walk fails
with ELOOP.

A process that called chroot(2) has its own root, a directory of the guest root named by its
global (canonical) path. Absolute paths and absolute symlink targets start there, and `..` at it
stays there (follow_dotdot(): path_equal(&nd->path, &nd->root)). A cwd is a global path too and
may lie outside the process root (chroot does not change the cwd): `..` from there climbs
until the guest root, as on Linux. Nothing ever climbs above the guest root.

The result is either the node (lookups: stat, open, chdir) or the parent directory and the last
name (operations that create or remove a name: mkdir, unlink, rename...), which is why the last
component is returned unresolved when it does not exist.
"""
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import MAXSYMLINKS, NAME_MAX, PATH_MAX
from .node import Node
from .resolve import (RESOLVE_BENEATH, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV,
                      SCOPED)

ROOT_MOUNTS = (b"dev", b"proc")      # mounted over the rootfs's own /dev and /proc
# How the last component was spelled: Linux's LAST_NORM / LAST_DOT / LAST_DOTDOT / LAST_ROOT.
LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT = "norm", "dot", "dotdot", "root"


@dataclass
class Resolved:
    chain: list[tuple[bytes, Node]]   # (name, dir) from the root down to the parent of `name`
    name: bytes                       # last component (b"" for the root)
    node: Node | None                 # what the last component names, None if nothing
    last: str                         # LAST_NORM ... LAST_ROOT
    trailing_slash: bool
    fd_link: bool = False             # node is a /proc/PID/fd/N link to an fd with no path
    mount_points: dict = field(default_factory=dict, repr=False)   # the walk's (Walker.points)

    @property
    def parent(self) -> Node:
        return self.chain[-1][1]

    @property
    def components(self) -> list[bytes]:
        """Canonical components of the resolved name (parent chain + last name)."""
        names = [name for name, _ in self.chain[1:]]
        return names + [self.name] if self.last == LAST_NORM else names

    @property
    def path(self) -> bytes:
        return b"/" + b"/".join(self.components)

    @property
    def is_mount_point(self) -> bool:
        """The name is a mount point (rmdir and rename of it are EBUSY): /dev, /proc, or one
        of the walk's namespace's."""
        return self.last == LAST_NORM and (len(self.chain) == 1 and self.name in ROOT_MOUNTS
                                           or self.path in self.mount_points)

    def full_chain(self) -> list[tuple[bytes, Node]]:
        """The chain down to and including the resolved node (which must exist)."""
        if self.node is None:
            raise GuestErrno(E.ENOENT)
        if self.last == LAST_NORM:
            return self.chain + [(self.name, self.node)]
        return list(self.chain)


class Walker:
    """Resolves guest paths against a root node. `mount_at_root(name)` gives the node mounted on
    /name (/dev, /proc), if any: mounts hide the rootfs's own entry of that name."""

    def __init__(self, root: Node, mount_at_root: Callable[[bytes], Node | None],
                 process_root: bytes = b"/", search: Callable[[Node], None] | None = None,
                 resolve: int = 0, points: dict | None = None):
        self.root = root
        # the mounts the guest made: global path of a mount point -> the mounted root
        # (fs/mount_table.py); empty for a namespace with the first three mounts only
        self.points = points or {}
        self.resolve_flags = resolve               # openat2's RESOLVE_* (resolve.py)
        self._floor = 0                            # RESOLVE_BENEATH: ".." may not pop below
        # may_lookup(): raises EACCES for a directory the caller may not search (None: every
        # directory may be searched, as by root)
        self.search = search
        self.mount_at_root = mount_at_root
        self._top = [(b"", root)]                  # the process root's chain
        self._top_names: tuple[bytes, ...] = ()
        if process_root != b"/":
            self._top = self._global_chain(process_root)
            self._top_names = tuple(name for name, _ in self._top[1:])

    def _global_chain(self, path: bytes) -> list[tuple[bytes, Node]]:
        """The chain of the directory at a global canonical path (a cwd, a process root)."""
        walker = Walker(self.root, self.mount_at_root, points=self.points)
        return walker.resolve(path, b"/", follow=True).full_chain()

    def resolve(self, path: bytes, cwd: bytes, *, follow: bool, parent_op: bool = False,
                stop_at_fd_links: bool = False) -> Resolved:
        """Walk `path` (relative ones from `cwd`, itself a canonical guest path).

        follow: follow a symlink in the last component. A trailing slash also forces following,
        except for operations on the parent (parent_op: mkdir, unlink, rename...) which, as in
        Linux, act on the name itself.
        stop_at_fd_links: a followed last component that is a /proc/PID/fd/N link to a pipe or
        other pathless file ends the walk there (fd_link=True), so that the caller can reach the
        open file itself, as Linux's magic links do."""
        if not path:
            raise GuestErrno(E.ENOENT)
        if len(path) >= PATH_MAX:
            raise GuestErrno(E.ENAMETOOLONG)
        chain = list(self._top)
        if not path.startswith(b"/"):
            chain = self._global_chain(cwd)
        elif self.resolve_flags & RESOLVE_BENEATH:
            raise GuestErrno(E.EXDEV)
        self._floor = len(chain)
        trailing = path.endswith(b"/")
        follow = follow or (trailing and not parent_op)
        found = self._walk(chain, deque(path.split(b"/")), follow, trailing, stop_at_fd_links)
        found.mount_points = self.points
        return found

    def _walk(self, chain, pending: deque, follow: bool, trailing: bool,
              stop_at_fd_links: bool) -> Resolved:
        links = 0
        name, node, last = b"", chain[-1][1], LAST_ROOT
        while pending:
            part = pending.popleft()
            if not part:
                continue
            if len(part) > NAME_MAX:
                raise GuestErrno(E.ENAMETOOLONG)
            directory = chain[-1][1]
            if not directory.is_dir:
                raise GuestErrno(E.ENOTDIR)
            if self.search is not None:
                self.search(directory)
            is_last = not any(pending)
            if part in (b".", b".."):
                if part == b"..":
                    self._check_dotdot(chain)
                if part == b".." and len(chain) > 1 and not self._at_process_root(chain):
                    chain.pop()
                name, node, last = b"", chain[-1][1], LAST_DOT if part == b"." else LAST_DOTDOT
                continue
            child = self._lookup(chain, part)
            if child is None:
                if not is_last:
                    raise GuestErrno(E.ENOENT)
                return Resolved(chain, part, None, LAST_NORM, trailing)
            if child.is_symlink and (follow or not is_last):
                self._check_symlink(child)
                # a namespace link ends every walk there: its text is no path (fs/nsfs.py)
                if is_last and (stop_at_fd_links or child.opens is not None) and \
                        _is_pathless_fd_link(child):
                    return Resolved(chain, part, child, LAST_NORM, trailing, fd_link=True)
                links += 1
                if links > MAXSYMLINKS:
                    raise GuestErrno(E.ELOOP)
                self._splice_symlink(chain, child.readlink(), pending)
                continue
            if is_last:
                return self._found(chain, part, child, trailing)
            chain.append((part, child))
        return self._found_dir(chain, last, trailing)

    def _check_dotdot(self, chain) -> None:
        """fs/namei.c follow_dotdot: under RESOLVE_BENEATH ".." may not leave the starting
        directory; under RESOLVE_NO_XDEV it may not leave a mount (/proc, /dev) for /."""
        if self.resolve_flags & RESOLVE_BENEATH and len(chain) <= self._floor:
            raise GuestErrno(E.EXDEV)
        if self.resolve_flags & RESOLVE_NO_XDEV and len(chain) == 2 and \
                self.mount_at_root(chain[1][0]) is chain[1][1]:
            raise GuestErrno(E.EXDEV)

    def _check_symlink(self, link: Node) -> None:
        """fs/namei.c pick_link and nd_jump_link: RESOLVE_NO_SYMLINKS refuses every link,
        RESOLVE_NO_MAGICLINKS a /proc magic link (ELOOP); a scoped walk may not jump through
        a magic link (EXDEV), and under RESOLVE_BENEATH not to an absolute target."""
        magic, flags = link.magic, self.resolve_flags
        if flags & RESOLVE_NO_SYMLINKS or (magic and flags & RESOLVE_NO_MAGICLINKS):
            raise GuestErrno(E.ELOOP)
        if magic and flags & SCOPED:
            raise GuestErrno(E.EXDEV)
        if flags & RESOLVE_BENEATH and link.readlink().startswith(b"/"):
            raise GuestErrno(E.EXDEV)

    def _at_process_root(self, chain) -> bool:
        return len(chain) == len(self._top) and \
            tuple(name for name, _ in chain[1:]) == self._top_names

    def _lookup(self, chain, name: bytes) -> Node | None:
        if self.points:           # lookup_mnt: a mount on the name hides what is beneath
            mounted = self.points.get(b"/".join([b""] + [n for n, _ in chain[1:]] + [name]))
            if mounted is not None:
                if self.resolve_flags & RESOLVE_NO_XDEV:
                    raise GuestErrno(E.EXDEV)
                return mounted
        if len(chain) == 1:
            mounted = self.mount_at_root(name)
            if mounted is not None:
                if self.resolve_flags & RESOLVE_NO_XDEV:
                    raise GuestErrno(E.EXDEV)
                return mounted
        return chain[-1][1].lookup(name)

    def _splice_symlink(self, chain, target: bytes, pending: deque) -> None:
        if not target:
            raise GuestErrno(E.ENOENT)       # an empty symlink resolves to nothing (Linux)
        if target.startswith(b"/"):          # absolute: from the process root, never the host's
            chain[:] = self._top
        pending.extendleft(reversed(target.split(b"/")))

    @staticmethod
    def _found(chain, name: bytes, node: Node, trailing: bool) -> Resolved:
        if trailing and not node.is_dir and not node.is_symlink:
            raise GuestErrno(E.ENOTDIR)
        return Resolved(chain, name, node, LAST_NORM, trailing)

    @staticmethod
    def _found_dir(chain, last: str, trailing: bool) -> Resolved:
        """The walk ended on a directory through `.`, `..` or the root itself: the chain already
        ends with that directory, and there is no last name."""
        return Resolved(chain, b"", chain[-1][1], last, trailing)


def _is_pathless_fd_link(node: Node) -> bool:
    """A /proc/PID/fd/N link to a file no path reaches: a pipe, a socket, an anonymous inode,
    or a file with no name left (" (deleted)": unlinked, O_TMPFILE, memfd), which Linux's magic
    link reaches all the same (nd_jump_link jumps to the file's own dentry)."""
    if node.opens is not None:          # a namespace: no path reaches its nsfs inode
        return True
    if node.fd is None:
        return False
    text = node.readlink()
    return not text.startswith(b"/") or text.endswith(b" (deleted)")
