"""Reads of this process's own memory that cannot crash: through /proc/self/mem, where an
address that holds nothing reads as b"" instead of a SIGSEGV. The locators (cpu_env.py) follow
candidate pointers with it before anything is read directly with ctypes."""
import os


def open_self() -> int:
    """A descriptor of /proc/self/mem (OSError where there is none); the caller closes it."""
    return os.open("/proc/self/mem", os.O_RDONLY)


def read(fd: int, address: int, size: int) -> bytes:
    """Up to `size` bytes at `address` of this process; b"" where nothing is mapped."""
    try:
        return os.pread(fd, size, address)
    except (OSError, OverflowError, ValueError):
        return b""
