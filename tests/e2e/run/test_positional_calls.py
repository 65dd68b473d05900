"""A call at a position on a file that has none is ESPIPE before its access mode is looked at
(issue 32, LTP pwritev202: pwritev2 on a pipe's read end answered EBADF): ksys_pread64,
ksys_pwrite64, do_preadv and do_pwritev check FMODE_PREAD/FMODE_PWRITE before vfs_read/
vfs_write check FMODE_READ/WRITE; a negative offset is EINVAL before the fd; a closed or
O_PATH fd EBADF. Compared with the native run; built by the host's gcc (static; -m32 for
i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <sys/syscall.h>
#include <sys/uio.h>
int main(void) {
    int p[2];
    pipe(p);
    char b[4] = "abc";
    struct iovec v = {b, 3};
    result("pread64 write end", pread(p[1], b, 1, 0));
    result("pwrite64 read end", pwrite(p[0], b, 1, 0));
    result("preadv write end", preadv(p[1], &v, 1, 0));
    result("pwritev read end", pwritev(p[0], &v, 1, 0));
    result("pwritev2 read end", pwritev2(p[0], &v, 1, 0, 0));
    result("pread64 bad fd", pread(99, b, 1, 0));
    result("pread64 negative", pread(p[0], b, 1, -1));
    int path = open("/", O_PATH);
    result("pread64 O_PATH", pread(path, b, 1, 0));
    int fd = open("/proc/self/exe", O_RDONLY);
    result("pwrite64 read-only file", pwrite(fd, b, 1, 0));
    result("pread64 file", pread(fd, b, 1, 1));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "positional_calls", PROGRAM, arch=request.param)


def test_positional_calls_as_natively(program):
    compare_with_native(program, b"pwritev2 read end          -1 ESPIPE")
