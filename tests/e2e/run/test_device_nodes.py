"""Device nodes made by root (issue 32: mknod of a character or block device was EPERM; LTP
mknod01, open11, statx01, setxattr02, fgetxattr02 make them): with CAP_MKNOD the overlay keeps
the node and its number as tmpfs does (shmem_mknod), stat shows it, and opening a character
device reaches the driver of its number (chrdev_open: 1:5 reads zeros, 1:3 takes and gives
nothing); without CAP_MKNOD it is EPERM (vfs_mknod), a fifo still allowed. Compared with the
native run as root; built by the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <sys/sysmacros.h>
#include <sys/wait.h>
int main(void) {
    char dir[] = "/tmp/devXXXXXX", zero[64], null[64], blk[64];
    mkdtemp(dir);
    chmod(dir, 0777);
    snprintf(zero, sizeof zero, "%s/zero", dir);
    snprintf(null, sizeof null, "%s/null", dir);
    snprintf(blk, sizeof blk, "%s/loop", dir);
    umask(0);
    result("mknod 1:5", mknod(zero, S_IFCHR | 0666, makedev(1, 5)));
    result("mknod 1:3", mknod(null, S_IFCHR | 0620, makedev(1, 3)));
    result("mknod block 7:200", mknod(blk, S_IFBLK | 0600, makedev(7, 200)));
    result("again", mknod(zero, S_IFCHR | 0666, makedev(1, 5)));
    struct stat st;
    stat(zero, &st);
    printf("zero: mode %o rdev %u:%u size %ld\n", st.st_mode, major(st.st_rdev), minor(st.st_rdev), (long)st.st_size);
    stat(blk, &st);
    printf("loop: mode %o rdev %u:%u\n", st.st_mode, major(st.st_rdev), minor(st.st_rdev));
    int fd = open(zero, O_RDONLY);
    char buf[4] = {1, 1, 1, 1};
    result("read zero", read(fd, buf, 4));
    printf("bytes %d%d%d%d\n", buf[0], buf[1], buf[2], buf[3]);
    int n = open(null, O_WRONLY);
    result("write null", write(n, "abc", 3));
    result("read null", read(open(null, O_RDONLY), buf, 4));
    result("unlink", unlink(zero));
    fflush(stdout);
    if (fork() == 0) {
        setresuid(65534, 65534, 65534);
        result("mknod as nobody", mknod(zero, S_IFCHR | 0666, makedev(1, 5)));
        result("mkfifo as nobody", mknod(zero, S_IFIFO | 0666, 0));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    unlink(zero); unlink(null); unlink(blk); rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "device_nodes", PROGRAM, arch=request.param)


def test_device_nodes_as_natively(program):
    compare_with_native(program, b"zero: mode 20666 rdev 1:5")
