"""A failed syscall's return as strace prints it: `-1 ENOENT (No such file or directory)`.

The names and messages are the kernel's one errno table (kernel_model/errno.py), read through
the debug interface's re-export (kernel_model/debug/abi.py).
"""
from kernel_model.debug.abi import ERRNOS, KERNEL_RESTART_ERRNOS


def format_error_return(errno: int) -> str:
    """The text after `= ` for a syscall that failed with `errno` (a positive number)."""
    if errno in KERNEL_RESTART_ERRNOS:
        name, message = KERNEL_RESTART_ERRNOS[errno]
        return f"? {name} ({message})"
    name, message = ERRNOS.get(errno, (f"ERRNO_{errno}", f"Unknown error {errno}"))
    return f"-1 {name} ({message})"


def format_raw_error_return(errno: int) -> str:
    """-e raw=: strace prints every error as a plain one (syscall.c syscall_exiting_trace's raw
    branch: print_err_ret), a kernel restart code too, whose message libc does not know:
    `-1 ERESTARTNOHAND (Unknown error 514)`."""
    if errno in KERNEL_RESTART_ERRNOS:
        return f"-1 {KERNEL_RESTART_ERRNOS[errno][0]} (Unknown error {errno})"
    return format_error_return(errno)
