"""RLIMIT_FSIZE bounds truncate, ftruncate and fallocate (issue 32, LTP truncate03: growing a
file past the limit succeeded; and truncate64, i386 glibc's truncate(), was ENOSYS): growing
past the soft limit is EFBIG with SIGXFSZ to the caller (fs/attr.c inode_newsize_ok), here
blocked so that it stays pending; shrinking and growing up to the limit work, and
FALLOC_FL_KEEP_SIZE grows nothing. Compared with the native run; built by the host's gcc
(static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-22s ") + r"""
#include <signal.h>
#include <sys/resource.h>

static void pending(void) {
    sigset_t set;
    sigpending(&set);
    printf("SIGXFSZ pending: %d\n", sigismember(&set, SIGXFSZ));
}

int main(void) {
    char dir[] = "/tmp/fsizeXXXXXX", path[64];
    mkdtemp(dir);
    snprintf(path, sizeof path, "%s/file", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGXFSZ);
    sigprocmask(SIG_BLOCK, &block, NULL);
    struct rlimit limit = {8192, 8192};
    setrlimit(RLIMIT_FSIZE, &limit);
    result("truncate to the limit", truncate(path, 8192));
    pending();
    result("truncate past it", truncate(path, 8193));
    pending();
    sigwaitinfo(&block, NULL);
    result("ftruncate past it", ftruncate(fd, 1 << 20));
    result("ftruncate down", ftruncate(fd, 100));
    result("fallocate past it", fallocate(fd, 0, 8000, 4096));
    result("fallocate KEEP_SIZE", fallocate(fd, FALLOC_FL_KEEP_SIZE, 8000, 4096));
    result("fallocate to it", fallocate(fd, 0, 4096, 4096));
    struct stat st;
    fstat(fd, &st);
    printf("size %ld\n", (long)st.st_size);
    pending();
    unlink(path);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "file_size_limit", PROGRAM, arch=request.param)


def test_the_size_limit_as_natively(program):
    compare_with_native(program, b"truncate past it       -1 EFBIG")
