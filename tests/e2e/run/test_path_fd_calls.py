"""An O_PATH descriptor names a place and nothing more (issue 32, LTP open13): fdget() and
fget() do not hand out an FMODE_PATH file, so ioctl, mmap and fsync on one are EBADF as on a
closed fd, like read, write, fchmod, fchown and fgetxattr (the sandbox answered ENOTTY, EACCES
and 0), while fstat, dup and fcntl(F_GETFD) work. Compared with the native run; built by the
host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-10s ", shown="0L") + r"""
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/xattr.h>

int main(void) {
    char dir[] = "/tmp/opathXXXXXX", path[64], byte;
    mkdtemp(dir);
    snprintf(path, sizeof path, "%s/file", dir);
    close(open(path, O_RDWR | O_CREAT, 0644));
    int fds[2] = {open(path, O_PATH), -1};
    fds[1] = dup(fds[0]);
    for (int i = 0; i < 2; i++) {
        int fd = fds[i];
        struct stat st;
        int size;
        result("read", read(fd, &byte, 1));
        result("write", write(fd, &byte, 1));
        result("fchmod", fchmod(fd, 0600));
        result("fchown", fchown(fd, 0, 0));
        result("ioctl", ioctl(fd, FIGETBSZ, &size));
        result("FIOCLEX", ioctl(fd, FIOCLEX));
        void *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        result("mmap", map == MAP_FAILED ? -1 : 0);
        result("fsync", fsync(fd));
        result("fgetxattr", fgetxattr(fd, "user.x", &byte, 1));
        result("fstat", fstat(fd, &st));
        result("F_GETFD", fcntl(fd, F_GETFD));
    }
    unlink(path);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "path_fd_calls", PROGRAM, arch=request.param)


def test_a_path_descriptor_is_no_file(program):
    compare_with_native(program, b"mmap       -1 EBADF", b"fstat      0")
