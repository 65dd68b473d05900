"""include/uapi/linux/userfaultfd.h: the API, its ioctls (type 0xAA, x86's _IOC encoding) and
the structures they copy, the same on i386 and x86-64 (every field is a __u64 or __s64)."""
import struct

UFFD_API = 0xAA
UFFD_USER_MODE_ONLY = 1

# ioctl numbers: _IOWR(0xAA, nr, struct) = 3 << 30 | size << 16 | 0xAA << 8 | nr, _IOR 2 << 30
UFFDIO_API = 0xC018AA3F             # struct uffdio_api: api, features, ioctls
UFFDIO_REGISTER = 0xC020AA00        # struct uffdio_register: range, mode, ioctls
UFFDIO_UNREGISTER = 0x8010AA01      # struct uffdio_range: start, len
UFFDIO_WAKE = 0x8010AA02
UFFDIO_COPY = 0xC028AA03            # struct uffdio_copy: dst, src, len, mode, copy
UFFDIO_ZEROPAGE = 0xC020AA04        # struct uffdio_zeropage: range, mode, zeropage
UFFDIO_WRITEPROTECT = 0xC018AA06    # struct uffdio_writeprotect: range, mode
USERFAULTFD_IOC_NEW = 0xAA00        # /dev/userfaultfd: _IO(0xAA, 0x00)

# The bits of uffdio_api.ioctls / uffdio_register.ioctls are the ioctls' numbers (_UFFDIO_*)
_REGISTER, _UNREGISTER, _WAKE, _COPY, _ZEROPAGE, _WRITEPROTECT, _API = 0, 1, 2, 3, 4, 6, 0x3F
API_IOCTLS = 1 << _REGISTER | 1 << _UNREGISTER | 1 << _API
RANGE_IOCTLS = 1 << _WAKE | 1 << _COPY | 1 << _ZEROPAGE
WP_RANGE_IOCTLS = RANGE_IOCTLS | 1 << _WRITEPROTECT

UFFD_FEATURE_PAGEFAULT_FLAG_WP = 1 << 0
UFFD_FEATURE_SIGBUS = 1 << 7
UFFD_FEATURE_THREAD_ID = 1 << 8
UFFD_FEATURE_EXACT_ADDRESS = 1 << 11
# What the model offers: the others (fork, remap, remove and unmap events, hugetlbfs and shmem
# minor faults, poison, asynchronous write protection, UFFDIO_MOVE) it does not have
FEATURES = (UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_SIGBUS | UFFD_FEATURE_THREAD_ID
            | UFFD_FEATURE_EXACT_ADDRESS)

UFFDIO_REGISTER_MODE_MISSING, UFFDIO_REGISTER_MODE_WP, UFFDIO_REGISTER_MODE_MINOR = 1, 2, 4
UFFDIO_COPY_MODE_DONTWAKE, UFFDIO_COPY_MODE_WP = 1, 2
UFFDIO_ZEROPAGE_MODE_DONTWAKE = 1
UFFDIO_WRITEPROTECT_MODE_WP, UFFDIO_WRITEPROTECT_MODE_DONTWAKE = 1, 2

UFFD_EVENT_PAGEFAULT = 0x12
UFFD_PAGEFAULT_FLAG_WRITE, UFFD_PAGEFAULT_FLAG_WP = 1, 2

# struct uffd_msg (packed, 32 bytes): event, three reserved fields, then the page fault's
# flags, address and thread id (the rest of the union's 24 bytes)
MSG = struct.Struct("<BBHIQQI4x")
API = struct.Struct("<QQQ")
RANGE = struct.Struct("<QQ")
