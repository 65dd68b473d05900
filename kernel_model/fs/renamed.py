"""Names that move with a rename: the paths the model keeps for processes and open files.

The model names a cwd, a process root, an executable and an open file by its global guest path
(fd links in /proc, getcwd, fchdir, *at dirfds and fchmod start from it). Linux keeps dentries
instead, and renaming a directory moves the whole subtree under it, so every one of those names
changes with it (d_move in fs/dcache.c). After a successful rename of `old` to `new`, each kept
path equal to `old` or beneath it is rewritten the same way. A path the rename could not have
moved never starts with `old/` after the rewrite (a directory cannot move beneath itself:
EINVAL), so rewriting twice (a description shared by two fd tables) changes nothing more.
"""


def moved(path: bytes, old: bytes, new: bytes) -> bytes:
    if path == old:
        return new
    if path.startswith(old + b"/"):
        return new + path[len(old):]
    return path


def follow_rename(processes, old: bytes, new: bytes) -> None:
    """Rewrite the kept paths of `processes` (cwd, root, exe, open files) after `old` -> `new`."""
    if old == new:
        return
    for proc in processes:
        proc.cwd = moved(proc.cwd, old, new)
        proc.root = moved(proc.root, old, new)
        proc.exe = moved(proc.exe, old, new)
        if proc.fds is None:
            continue
        for entry in proc.fds.entries.values():
            path = getattr(entry.file, "path", None)
            if isinstance(path, bytes):
                entry.file.path = moved(path, old, new)
