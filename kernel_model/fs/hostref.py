"""Where a host inode is: a name in a host directory the model holds open, never a path string.

A write-through rootfs changes under the guest: a directory it has open may be renamed and a
symlink to a host path put in its old place. Linux keeps an open file bound to its inode, so the
old handle still shows the same directory. A host path string would not: re-resolved later by
the host, it goes through the new symlink to the host folder it names. So in write-through mode
every host directory the model looks into is held by an O_PATH descriptor opened with
O_NOFOLLOW|O_DIRECTORY from its parent's descriptor (openat, one component at a time, as
openat2's RESOLVE_NO_SYMLINKS walks), and every other inode is reached as a name relative to
that descriptor (the *at calls, never following a final symlink). An open file description
keeps its own descriptor (HostNode.pin): what it shows is what it opened.

The read-only lower layer of the in-memory overlay is never changed by the guest, so there a
host inode is named by its path (`dir` None): the overlay keeps every directory it has seen,
and holding a descriptor for each would run the host out of them.
"""
import os
from dataclasses import dataclass

from ..errors import KernelPanic
from .hosterrno import guest_error

O_PATH = getattr(os, "O_PATH", 0o10000000)


@dataclass(frozen=True)
class HostRef:
    """`name` in the directory node `dir` (kept alive here: its descriptor is in use), or,
    with `dir` None, the host path `name`."""
    dir: object          # a HostDir (its directory_fd()), or None
    name: bytes

    @property
    def dir_fd(self) -> int | None:
        return None if self.dir is None else self.dir.directory_fd()

    # --- host calls that never follow a final symlink --------------------------------------
    def lstat(self) -> os.stat_result | None:
        try:
            return os.lstat(self.name, dir_fd=self.dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise guest_error(exc) from None

    def open(self, flags: int, mode: int = 0o600) -> int:
        return host_call(os.open, self.name, flags | os.O_NOFOLLOW, mode, dir_fd=self.dir_fd)

    def readlink(self) -> bytes:
        return host_call(os.readlink, self.name, dir_fd=self.dir_fd)

    def utime(self, ns: tuple[int, int]) -> None:
        host_call(os.utime, self.name, ns=ns, dir_fd=self.dir_fd, follow_symlinks=False)

    def chmod(self, mode: int) -> None:
        # Only for inodes that are not symlinks (namei resolved the name with follow=True).
        host_call(os.chmod, self.name, mode, dir_fd=self.dir_fd)


class _Detached:
    """The `dir` of a reference an open file description has let go of (HostNode.detach):
    the inode is reached through its own descriptor from then on, never by name."""

    def directory_fd(self) -> int:
        raise KernelPanic("a host inode kept by an open file was reached by its old name")


DETACHED = _Detached()


def host_call(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except OSError as exc:
        raise guest_error(exc) from None


def close_quietly(fd: int | None) -> None:
    """For __del__ backstops: `os` may already be torn down at interpreter exit."""
    if fd is None or fd < 0:
        return
    try:
        os.close(fd)
    except (OSError, TypeError, AttributeError):
        pass
