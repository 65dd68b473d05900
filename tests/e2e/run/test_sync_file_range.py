"""sync_file_range(2) (issue 32, LTP sync_file_range01 got ENOSYS): fs/sync.c's checks in order,
EBADF (closed, O_PATH), EINVAL (unknown flags, a negative offset or length, an end that wraps,
before the file's type), ESPIPE for a pipe or a character device, 0 for a regular file and a
directory. Compared with the native run on both arches (i386 splits both loff_t values)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <stdint.h>
#include <sys/syscall.h>

static long sfr(int fd, int64_t offset, int64_t nbytes, unsigned flags) {
#ifdef __i386__
    return syscall(SYS_sync_file_range, fd, (uint32_t)offset, (uint32_t)((uint64_t)offset >> 32),
                   (uint32_t)nbytes, (uint32_t)((uint64_t)nbytes >> 32), flags);
#else
    return syscall(SYS_sync_file_range, fd, offset, nbytes, flags);
#endif
}

int main(void) {
    char dir[] = "/tmp/sfrXXXXXX", name[64];
    mkdtemp(dir);
    snprintf(name, sizeof name, "%s/f", dir);
    int fd = open(name, O_RDWR | O_CREAT, 0644), ro = open(name, O_RDONLY);
    int path = open(name, O_PATH), null = open("/dev/null", O_RDWR), d = open(dir, O_RDONLY);
    int p[2];
    pipe(p);
    write(fd, "data", 4);
    result("file write", sfr(fd, 0, 4, 2));
    result("file whole", sfr(fd, 0, 0, 7));
    result("read-only file", sfr(ro, 0, 1, 2));
    result("directory", sfr(d, 0, 1, 1));
    result("closed fd", sfr(99, 0, 1, 2));
    result("O_PATH", sfr(path, 0, 1, 2));
    result("bad flags", sfr(fd, 0, 1, 8));
    result("negative offset", sfr(fd, -1, 1, 1));
    result("negative length", sfr(fd, 0, -1, 2));
    result("end wraps", sfr(fd, INT64_MAX, 1, 2));
    result("huge end", sfr(fd, INT64_MAX - 1, 1, 2));
    result("/dev/null", sfr(null, 0, 1, 4));
    result("/dev/null bad flags", sfr(null, 0, 1, 8));
    result("/dev/null negative", sfr(null, -1, 1, 4));
    result("pipe", sfr(p[1], 0, 1, 2));
    unlink(name);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "sync_file_range", PROGRAM, arch=request.param)


def test_sync_file_range_as_natively(program):
    compare_with_native(program, b"/dev/null                  -1 ESPIPE", b"end wraps                  -1 EINVAL",
                        b"file write                 0")
