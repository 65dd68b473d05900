"""openat2's resolve flags (include/uapi/linux/openat2.h) and the view that carries them.

The walk (namei.py) reads them from the process view it is given: RESOLVE_IN_ROOT makes the
starting directory the walk's root (fs/namei.c set_root: ".." stops there, an absolute path or
symlink starts there), the others restrict what the walk may cross.
"""
RESOLVE_NO_XDEV = 0x01        # no mount crossing: EXDEV
RESOLVE_NO_MAGICLINKS = 0x02  # no /proc/PID/fd/N-style link: ELOOP
RESOLVE_NO_SYMLINKS = 0x04    # no symlink at all: ELOOP
RESOLVE_BENEATH = 0x08        # no escape from the starting directory: EXDEV
RESOLVE_IN_ROOT = 0x10        # the starting directory is the root
RESOLVE_CACHED = 0x20         # only the dentry cache: EAGAIN where it would block
VALID_RESOLVE_FLAGS = 0x3F
SCOPED = RESOLVE_BENEATH | RESOLVE_IN_ROOT


class ResolveView:
    """A process view (fsview.py) whose walks obey `resolve`, started at the global path
    `start` (the dirfd's directory or the cwd)."""

    def __init__(self, view, resolve: int, start: bytes):
        self._view = view
        self.resolve = resolve
        self.start = start

    def __getattr__(self, name):
        return getattr(self._view, name)

    def root(self) -> bytes:
        return self.start if self.resolve & RESOLVE_IN_ROOT else self._view.root()
