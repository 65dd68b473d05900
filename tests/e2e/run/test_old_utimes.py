"""futimesat, utimes and utime (issue 32, LTP futimesat01: ENOSYS; glibc calls utimensat, so
these raw calls had never been asked for): struct timeval[2] and struct utimbuf of longs, NULL
for now, microseconds in 0..999999 (EINVAL), relative to a directory fd for futimesat
(fs/utimes.c do_futimesat, sys_utimes, sys_utime). Compared with the native run; built by the
host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-22s ") + r"""
#include <sys/syscall.h>
#include <sys/time.h>
#include <utime.h>

static void times_of(const char *path) {
    struct stat st;
    stat(path, &st);
    printf("  atime %ld.%09ld mtime %ld.%09ld\n", (long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
           (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

int main(void) {
    char dir[] = "/tmp/utXXXXXX", path[64];
    mkdtemp(dir);
    snprintf(path, sizeof path, "%s/file", dir);
    close(open(path, O_RDWR | O_CREAT, 0644));
    int dirfd = open(dir, O_DIRECTORY);
    struct timeval tv[2] = {{1000, 5}, {2000, 999999}};
    result("futimesat", syscall(SYS_futimesat, dirfd, "file", tv));
    times_of(path);
    tv[1].tv_usec = 1000000;
    result("futimesat bad usec", syscall(SYS_futimesat, dirfd, "file", tv));
    tv[0].tv_sec = 3000; tv[1].tv_usec = 7;
    result("utimes", syscall(SYS_utimes, path, tv));
    times_of(path);
    struct utimbuf ub = {4000, 5000};
    result("utime", syscall(SYS_utime, path, &ub));
    times_of(path);
    result("utime nothing", syscall(SYS_utime, "/tmp/utnothing/x", &ub));
    unlink(path);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "old_utimes", PROGRAM, arch=request.param)


def test_old_time_calls_as_natively(program):
    compare_with_native(program, b"atime 4000.000000000 mtime 5000.000000000")
