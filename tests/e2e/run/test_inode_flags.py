"""Inode attribute flags (chattr +i / +a: FS_IOC_GETFLAGS, FS_IOC_SETFLAGS) on a tmpfs file
(/dev/shm) and an ext4 one (/tmp, the rootfs): what each file system shows and takes, and
the EPERMs an immutable or append-only file (or directory) gives to opening for writing,
truncate, chmod, chown, utimes, xattrs, unlink, rename and link, as natively (as root) on
both arches. The sandbox answered ENOTTY to the ioctls (LTP setxattr03's TBROK)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-34s ") + r"""
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <sys/wait.h>

static char dir[64], file[80], other[80], sub[80], inner[96], fresh[96];

static long setflags(const char *path, int flags) {
    int fd = open(path, O_RDONLY), r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

static void show_flags(const char *what, const char *path) {
    int fd = open(path, O_RDONLY), flags = -1;
    long r = ioctl(fd, FS_IOC_GETFLAGS, &flags);
    struct statx sx;
    statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx);
    printf("%-34s %ld flags=%x statx=%llx\n", what, r, flags,
           (unsigned long long)(sx.stx_attributes & (STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND)));
    close(fd);
}

static long opened(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd >= 0)
        close(fd);
    return fd < 0 ? -1 : 0;
}

static void changes(const char *kind) {
    char what[64];
#define R(name, call) snprintf(what, sizeof what, "%s %s", kind, name), result(what, call)
    R("open rdonly", opened(file, O_RDONLY));
    R("open wronly", opened(file, O_WRONLY));
    R("open append", opened(file, O_WRONLY | O_APPEND));
    R("open append trunc", opened(file, O_WRONLY | O_APPEND | O_TRUNC));
    R("truncate", truncate(file, 1));
    R("chmod", chmod(file, 0600));
    R("chown", chown(file, 0, 0));
    R("utimes now", utimensat(AT_FDCWD, file, NULL, 0));
    struct timespec t[2] = {{1, 0}, {1, 0}};
    R("utimes set", utimensat(AT_FDCWD, file, t, 0));
    R("setxattr", setxattr(file, "user.k", "v", 1, 0));
    R("removexattr", removexattr(file, "user.k"));
    R("link", link(file, other));
    R("rename", rename(file, other));
    R("unlink", unlink(file));
}

static void in_dir(const char *base) {
    strcpy(dir, base);
    strcat(dir, "/iflXXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(inner, sizeof inner, "%s/sub/inner", dir);
    snprintf(fresh, sizeof fresh, "%s/sub/fresh", dir);
    printf("== %s\n", base);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    setxattr(file, "user.k", "v", 1, 0);
    show_flags("new file", file);
    result("set secrm (0x1)", setflags(file, FS_SECRM_FL));
    result("set nodump", setflags(file, FS_NODUMP_FL));
    show_flags("nodump", file);
    result("set immutable", setflags(file, FS_IMMUTABLE_FL));
    show_flags("immutable", file);
    int fd = open(file, O_RDONLY);
    result("fcntl setfl append", fcntl(fd, F_SETFL, O_APPEND));
    close(fd);
    changes("immutable");
    result("set append", setflags(file, FS_APPEND_FL));
    show_flags("append", file);
    fd = open(file, O_WRONLY | O_APPEND);
    result("write at the end", write(fd, "x", 1));
    result("fcntl setfl no append", fcntl(fd, F_SETFL, 0));
    result("ftruncate", ftruncate(fd, 0));
    close(fd);
    changes("append");
    result("clear", setflags(file, 0));
    mkdir(sub, 0755);
    close(open(inner, O_CREAT | O_WRONLY, 0644));
    result("dir set immutable", setflags(sub, FS_IMMUTABLE_FL));
    result("dir immutable create", opened(fresh, O_CREAT | O_WRONLY));
    result("dir immutable unlink", unlink(inner));
    result("dir set append", setflags(sub, FS_APPEND_FL));
    result("dir append create", opened(fresh, O_CREAT | O_WRONLY));
    result("dir append unlink", unlink(inner));
    result("dir clear", setflags(sub, 0));
    fflush(stdout);
    if (fork() == 0) {          /* an owner without CAP_LINUX_IMMUTABLE */
        chown(file, 65534, 65534);
        chmod(dir, 0755);       /* mkdtemp's 0700 */
        setuid(65534);
        result("nobody set immutable", setflags(file, FS_IMMUTABLE_FL));
        result("nobody set nodump", setflags(file, FS_NODUMP_FL));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    unlink(fresh); unlink(inner); rmdir(sub); setflags(file, 0); unlink(file); unlink(other);
    result("cleaned up", rmdir(dir));
}

int main(void)
{
    in_dir("/dev/shm");
    in_dir("/tmp");
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
# the cases the native run must reach: each flag's refusal and what it still lets through
SHOWN = (("immutable open wronly", "-1 EPERM"), ("append open append", "0"),
         ("append open wronly", "-1 EPERM"), ("immutable setxattr", "-1 EPERM"),
         ("append utimes now", "0"), ("dir append unlink", "-1 EPERM"),
         ("nobody set immutable", "-1 EPERM"), ("nobody set nodump", "0"),
         ("set secrm (0x1)", "-1 EOPNOTSUPP"), ("set secrm (0x1)", "0 "))


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_immutable_and_append_only_files_refuse_changes_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"inode_flags_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *(f"{what:<34} {answer}".encode() for what, answer in SHOWN))
