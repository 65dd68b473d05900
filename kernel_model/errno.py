"""Linux errno values as the guest sees them, and the exception that carries one.

The numbers are Linux's (asm-generic/errno-base.h, errno.h), identical on i386 and x86-64.
They are spelled out here rather than taken from the host's `errno` module so that the guest
sees Linux numbers whatever the host is.
"""

EPERM = 1
ENOENT = 2
ESRCH = 3
EINTR = 4
EIO = 5
ENXIO = 6
E2BIG = 7
ENOEXEC = 8
EBADF = 9
ECHILD = 10
EAGAIN = 11
ENOMEM = 12
EACCES = 13
EFAULT = 14
EBUSY = 16
EEXIST = 17
EXDEV = 18
ENODEV = 19
ENOTDIR = 20
EISDIR = 21
EINVAL = 22
ENFILE = 23
EMFILE = 24
ENOTTY = 25
EFBIG = 27
ENOSPC = 28
ESPIPE = 29
EROFS = 30
EMLINK = 31
EPIPE = 32
EDOM = 33
ERANGE = 34
EDEADLK = 35
ENAMETOOLONG = 36
ENOLCK = 37
ENOSYS = 38
ENOTEMPTY = 39
ELOOP = 40
ENODATA = 61
EOVERFLOW = 75
ENOTSOCK = 88
EOPNOTSUPP = 95
EAFNOSUPPORT = 97
ETIMEDOUT = 110

NAMES = {value: name for name, value in globals().items()
         if name.startswith("E") and isinstance(value, int)}


class GuestErrno(Exception):
    """Raised inside the kernel model to fail the current syscall with -errno.

    Not a TraplineError: it never leaves the kernel; the syscall dispatcher turns it into the
    guest-visible return value.
    """

    def __init__(self, errno: int, detail: str = ""):
        super().__init__(f"{NAMES.get(errno, errno)}{': ' + detail if detail else ''}")
        self.errno = errno
