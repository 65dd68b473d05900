"""file_getattr and file_setattr (Linux 6.17's system calls over the FS_IOC_FSGETXATTR
attributes) on ext4 (/tmp) and tmpfs (/dev/shm), as natively (as root) on both arches: the
xflags the inode flags stand for (the sandbox read zeros whatever chattr had set), each xflag
set alone as each file system answers it (the sandbox refused everything but zeros), a flag
outside the mask EINVAL, and EOPNOTSUPP for a symlink and /proc (the sandbox read zeros)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-30s ") + r"""
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

/* the host's headers may predate them: Linux 6.17's numbers, the same on both ABIs' tables */
#define NR_file_getattr 468
#define NR_file_setattr 469
struct file_attr_ { uint64_t xflags; uint32_t extsize, nextents, projid, cowextsize; };

static void show(const char *what, const char *path, int at) {
    struct file_attr_ a;
    memset(&a, 0xff, sizeof a);
    long r = syscall(NR_file_getattr, AT_FDCWD, path, &a, sizeof a, at);
    printf("%-30s %ld %s xflags=%llx extsize=%u nextents=%u projid=%u cow=%u\n", what, r,
           r ? strerrorname_np(errno) : "", (unsigned long long)a.xflags, a.extsize,
           a.nextents, a.projid, a.cowextsize);
}

static long set(const char *path, uint64_t xflags, uint32_t extsize, uint32_t projid) {
    struct file_attr_ a = {xflags, extsize, 9, projid, 0};
    return syscall(NR_file_setattr, AT_FDCWD, path, &a, sizeof a, 0);
}

static const uint64_t XFLAGS[] = {0x1, 0x2, 0x8, 0x10, 0x20, 0x40, 0x80, 0x200, 0x800, 0x1000,
                                  0x8000, 0x20000, 0x80000000, 0x100000000ULL};

static void in_dir(const char *base) {
    char dir[64], file[80], sub[80], link_[80], what[64];
    strcpy(dir, base);
    strcat(dir, "/faXXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link_, sizeof link_, "%s/link", dir);
    printf("== %s\n", base);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    mkdir(sub, 0755);
    symlink("file", link_);
    show("file new", file, 0);
    int fd = open(file, O_RDONLY), flags = FS_NODUMP_FL;
    ioctl(fd, FS_IOC_SETFLAGS, &flags);
    close(fd);
    show("file after chattr +d", file, 0);
    const char *paths[] = {file, sub};
    for (int p = 0; p < 2; p++)
        for (unsigned i = 0; i < sizeof XFLAGS / sizeof *XFLAGS; i++) {
            snprintf(what, sizeof what, "%s set %llx", p ? "dir" : "file",
                     (unsigned long long)XFLAGS[i]);
            result(what, set(paths[p], XFLAGS[i], 0, 0));
            show(what, paths[p], 0);
            set(paths[p], 0, 0, 0);
        }
    result("file projid 5", set(file, 0, 0, 5));
    result("file extsize alone", set(file, 0, 4096, 0));
    show("symlink nofollow", link_, AT_SYMLINK_NOFOLLOW);
    show("symlink followed", link_, 0);
    unlink(link_); unlink(file); rmdir(sub);
    result("cleaned up", rmdir(dir));
}

int main(void)
{
    in_dir("/dev/shm");
    in_dir("/tmp");
    show("proc", "/proc/self/status", 0);
    result("proc set", set("/proc/self/status", 0, 0, 0));
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
SHOWN = (("file after chattr +d", "0  xflags=80"), ("file set 1", "-1 EOPNOTSUPP"),
         ("file set 1", "0 "), ("file set 100000000", "-1 EINVAL"),
         ("symlink nofollow", "-1 EOPNOTSUPP"), ("proc set", "-1 EOPNOTSUPP"))


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_file_attr_calls_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"file_attr_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *(f"{what:<30} {answer}".encode() for what, answer in SHOWN))
