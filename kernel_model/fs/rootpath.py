"""How a global guest path is shown to a process whose root is elsewhere (after chroot(2)).

Paths are kept global inside the model (a cwd, an open file's path, the executable); a process
sees them from its own root. Linux's fs/d_path.c builds such names by walking up to the
reader's root: a path beneath it loses the root's prefix; a path outside it (a cwd left outside
by chroot) is "unreachable", which d_path() (the /proc/PID/{cwd,exe,fd/N} links) shows as the
path from the global root, and getcwd(2) as that path behind "(unreachable)".
"""
UNREACHABLE = b"(unreachable)"


def beneath_root(path: bytes, root: bytes) -> bytes | None:
    """`path` as seen from `root`, or None when it is outside it."""
    if root == b"/":
        return path
    if path == root:
        return b"/"
    if path.startswith(root + b"/"):
        return path[len(root):]
    return None


def link_text(path: bytes, root: bytes) -> bytes:
    """What d_path() gives: the /proc links of a process."""
    if not path.startswith(b"/"):
        return path                     # pipe:[N], anon_inode:[...] have no place in a tree
    shown = beneath_root(path, root)
    return path if shown is None else shown


def getcwd_text(path: bytes, root: bytes) -> bytes:
    """What getcwd(2) gives (fs/d_path.c: SYSCALL_DEFINE2(getcwd))."""
    shown = beneath_root(path, root)
    return UNREACHABLE + path if shown is None else shown
