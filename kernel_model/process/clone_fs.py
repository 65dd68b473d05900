"""CLONE_FS (kernel/fork.c copy_fs, fs/fs_struct.c): a process's cwd, root and umask live in its
fs_struct, which clone(CLONE_FS) shares with the child instead of copying: a chdir, fchdir,
chroot or umask of either is the other's too, until one calls unshare(CLONE_FS)
(unshare_fs: a copy of its own). Threads share it as they share everything. The model keeps
the three values on each Process and an FsStruct token naming the group: a change is written
to every process holding the same token, and kcmp(KCMP_FS) compares the tokens.
"""


class FsStruct:
    """The identity of one fs_struct (the values are on the processes that share it)."""
    __slots__ = ()


def set_fs(kernel, proc, **values) -> None:
    """Give cwd, root or umask their new values in `proc` and every process sharing its
    fs_struct (set_fs_pwd, set_fs_root, and umask's current->fs->umask)."""
    token = proc.fs_struct
    for other in kernel.processes.values():
        if other.fs_struct is token and other is not proc:
            for name, value in values.items():
                setattr(other, name, value)
    for name, value in values.items():
        setattr(proc, name, value)
