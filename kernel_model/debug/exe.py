"""What a process runs, as /proc shows it to a debugger: the program file (/proc/PID/exe; GDB
reads the program's symbols from it at start and after every exec: qXfer:exec-file:read, the
exec stop reply) and a thread's name (/proc/PID/task/TID/comm: GDB's `info threads`, from
qXfer:threads:read). Part of the debug interface (kernel_model/debug/), one of its
parts.

The model keeps paths global (kernel_model/fsview.py): the global path names the file in the
tree the sandbox sees, which is where a debugger on the same host finds it; a process's own
view of it (readlink("/proc/self/exe")) is the same path seen from the process's root.
"""
from ..fsview import fs_view

TASK_COMM_LEN = 16          # include/linux/sched.h: 15 bytes and the NUL


class ExecutableAccess:
    @staticmethod
    def executable_path(process) -> bytes:
        """The global path of the program file `process` runs (its last successful exec)."""
        return process.exe

    @staticmethod
    def thread_name(thread) -> bytes:
        """`thread`'s comm: what prctl(PR_SET_NAME) set, else the program file's base name
        (exec sets it so, and a new thread inherits it), at most 15 bytes."""
        comm = getattr(thread, "comm", None)
        return comm or thread.process.exe.rsplit(b"/", 1)[-1][:TASK_COMM_LEN - 1]

    @staticmethod
    def fd_path(process, fd: int) -> bytes | None:
        """What readlink("/proc/PID/fd/FD") shows the process (strace -y's `3</etc/passwd>`,
        `1<pipe:[1]>`), None for a descriptor it does not have. Paths are seen from the
        process's root, as its own readlink would see them."""
        if process.fds is None or fd < 0:
            return None
        return fs_view(process).fd_targets().get(fd)
