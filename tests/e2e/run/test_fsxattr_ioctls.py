"""FS_IOC_FSGETXATTR and FS_IOC_FSSETXATTR (struct fsxattr, the XFS form of the inode flags
xfs_io's chattr/lsattr and the fstests use) on ext4 (/tmp) and tmpfs (/dev/shm) files and
directories, as natively (as root) on both arches: the xflags the inode flags stand for, each
xflag set alone (kept, ignored, EOPNOTSUPP or EINVAL, as each file system answers), a project
id and extent size hints, a non-owner's EPERM, EFAULT, ENOTTY on /proc. The sandbox answered
ENOTTY to both requests."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-30s ") + r"""
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static void show(const char *what, int fd) {
    struct fsxattr x;
    int fl = -1;
    memset(&x, 0xff, sizeof x);
    long r = ioctl(fd, FS_IOC_FSGETXATTR, &x);
    ioctl(fd, FS_IOC_GETFLAGS, &fl);
    printf("%-30s %ld xflags=%x extsize=%u nextents=%u projid=%u cow=%u pad=%02x flags=%x\n",
           what, r, x.fsx_xflags, x.fsx_extsize, x.fsx_nextents, x.fsx_projid,
           x.fsx_cowextsize, x.fsx_pad[7], fl);
}

static long set(int fd, unsigned xflags, unsigned extsize, unsigned projid) {
    struct fsxattr x;
    memset(&x, 0, sizeof x);
    x.fsx_xflags = xflags;
    x.fsx_extsize = extsize;
    x.fsx_projid = projid;
    x.fsx_nextents = 7;             /* not read */
    x.fsx_pad[0] = 1;
    return ioctl(fd, FS_IOC_FSSETXATTR, &x);
}

static const unsigned XFLAGS[] = {0x1, 0x2, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200, 0x400,
                                  0x800, 0x1000, 0x2000, 0x4000, 0x8000, 0x10000, 0x20000,
                                  0x40000, 0x80000000};

static void sweep(const char *kind, const char *path) {
    char what[64];
    int fd = open(path, O_RDONLY);
    snprintf(what, sizeof what, "%s new", kind);
    show(what, fd);
    for (unsigned i = 0; i < sizeof XFLAGS / sizeof *XFLAGS; i++) {
        snprintf(what, sizeof what, "%s set %x", kind, XFLAGS[i]);
        result(what, set(fd, XFLAGS[i], 0, 0));
        show(what, fd);
        set(fd, 0, 0, 0);
    }
    snprintf(what, sizeof what, "%s projid 5", kind);
    result(what, set(fd, 0, 0, 5));
    show(what, fd);
    snprintf(what, sizeof what, "%s projid -1", kind);
    result(what, set(fd, 0, 0, -1));
    snprintf(what, sizeof what, "%s extsize alone", kind);
    result(what, set(fd, 0, 4096, 0));
    snprintf(what, sizeof what, "%s extsize hint", kind);
    result(what, set(fd, 0x800, 4096, 0));
    snprintf(what, sizeof what, "%s nodump+noatime", kind);
    result(what, set(fd, 0xc0, 0, 0));
    show(what, fd);
    int flags = FS_NODUMP_FL;
    snprintf(what, sizeof what, "%s setflags nodump", kind);
    result(what, ioctl(fd, FS_IOC_SETFLAGS, &flags));
    show(what, fd);
    set(fd, 0, 0, 0);
    snprintf(what, sizeof what, "%s get EFAULT", kind);
    result(what, ioctl(fd, FS_IOC_FSGETXATTR, (void *)8));
    snprintf(what, sizeof what, "%s set EFAULT", kind);
    result(what, ioctl(fd, FS_IOC_FSSETXATTR, (void *)8));
    fflush(stdout);
    if (fork() == 0) {
        setuid(65534);
        snprintf(what, sizeof what, "%s nobody get", kind);
        show(what, fd);
        snprintf(what, sizeof what, "%s nobody set", kind);
        result(what, set(fd, 0, 0, 0));
        snprintf(what, sizeof what, "%s nobody set 0x20000", kind);
        result(what, set(fd, 0x20000, 0, 0));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    close(fd);
}

static void in_dir(const char *base) {
    char dir[64], file[80], sub[80];
    strcpy(dir, base);
    strcat(dir, "/fsxXXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    printf("== %s\n", base);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    mkdir(sub, 0755);
    sweep("file", file);
    sweep("dir", sub);
    unlink(file); rmdir(sub);
    result("cleaned up", rmdir(dir));
}

int main(void)
{
    in_dir("/dev/shm");
    in_dir("/tmp");
    int fd = open("/proc/self/status", O_RDONLY);
    struct fsxattr x;
    result("proc get", ioctl(fd, FS_IOC_FSGETXATTR, &x));
    result("proc set", set(fd, 0, 0, 0));
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
# the cases the native run must reach on both file systems
SHOWN = (("file set 8", "0"), ("file set 1", "-1 EOPNOTSUPP"), ("file set 1000", "-1 EINVAL"),
         ("dir set 800", "-1 EINVAL"), ("file projid 5", "-1 EOPNOTSUPP"),
         ("file nobody set", "-1 EPERM"), ("file nobody set 0x20000", "-1 EOPNOTSUPP"),
         ("file set EFAULT", "-1 EFAULT"), ("proc get", "-1 ENOTTY"))


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_fsxattr_ioctls_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"fsxattr_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *(f"{what:<30} {answer}".encode() for what, answer in SHOWN))
