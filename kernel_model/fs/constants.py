"""Linux file-system constants as the guest sees them.

Values are Linux's (include/uapi/asm-generic/fcntl.h, uapi/linux/stat.h, dirent.h), identical on
i386 and x86-64, spelled out so that the host's `os` module never decides what the guest sees.
"""

# open(2) flags: one table for the whole kernel (kernel_model/flags.py).
from ..flags import (O_ACCMODE, O_APPEND, O_CLOEXEC, O_CREAT, O_DIRECT,  # noqa: F401
                     O_DIRECTORY, O_EXCL, O_NOATIME, O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_PATH,
                     O_RDONLY, O_RDWR, O_TMPFILE, O_TRUNC, O_WRONLY)

O_TMPFILE_BIT = O_TMPFILE & ~O_DIRECTORY      # __O_TMPFILE; O_TMPFILE = __O_TMPFILE | O_DIRECTORY

SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE = 0, 1, 2, 3, 4

# access(2) modes.
F_OK, X_OK, W_OK, R_OK = 0, 1, 2, 4

# st_mode file types (uapi/linux/stat.h).
S_IFMT = 0o170000
S_IFSOCK = 0o140000
S_IFLNK = 0o120000
S_IFREG = 0o100000
S_IFBLK = 0o060000
S_IFDIR = 0o040000
S_IFCHR = 0o020000
S_IFIFO = 0o010000
S_ISUID, S_ISGID, S_ISVTX = 0o4000, 0o2000, 0o1000

# d_type values of getdents64 (include/linux/fs_types.h): DT_x == S_IFx >> 12.
DT_UNKNOWN, DT_FIFO, DT_CHR, DT_DIR, DT_BLK, DT_REG, DT_LNK, DT_SOCK = 0, 1, 2, 4, 6, 8, 10, 12

# Limits (include/uapi/linux/limits.h): PATH_MAX counts the terminating NUL.
PATH_MAX = 4096
NAME_MAX = 255
MAXSYMLINKS = 40                 # include/linux/namei.h: nested and sequential links together

BLOCK_SIZE = 4096                # st_blksize we report everywhere (ext4's)
DIR_SIZE = 4096                  # st_size of every directory (ext4's), never the host fs's


def makedev(major: int, minor: int) -> int:
    """The kernel's new_encode_dev(): what stat() puts in st_dev / st_rdev."""
    return (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12)


# st_dev of each modeled mount. Fixed so that no host device number reaches the guest.
ROOTFS_DEV = makedev(8, 1)       # looks like /dev/sda1
DEVTMPFS_DEV = makedev(0, 5)
PROC_DEV = makedev(0, 4)
PIPE_DEV = 0x0c        # st_dev Linux gives pipefs inodes on a typical system


def file_type(mode: int) -> int:
    return mode & S_IFMT


def dtype_of(mode: int) -> int:
    return (mode & S_IFMT) >> 12


def blocks_for(size: int) -> int:
    """st_blocks (512-byte units) of a non-sparse file stored in 4 KiB blocks."""
    return (size + BLOCK_SIZE - 1) // BLOCK_SIZE * (BLOCK_SIZE // 512)


MAX_LFS_FILESIZE = (1 << 63) - 1     # include/linux/fs.h on 64-bit: a tmpfs file's s_maxbytes
