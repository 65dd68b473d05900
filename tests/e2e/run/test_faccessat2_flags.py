"""faccessat2's flags (issue 32, LTP faccessat202: unknown flags were accepted): do_faccessat
takes AT_EACCESS, AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH only (EINVAL otherwise, after the
mode's check); AT_SYMLINK_NOFOLLOW checks a final symlink itself (a dangling one exists, and
a symlink's mode lets root execute it), AT_EMPTY_PATH with an empty path checks the fd's inode
(a file, the cwd, a pipe). Compared with the native run; built by the host's gcc (static;
-m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-24s ") + r"""
#include <sys/syscall.h>
static long faccessat2(int fd, const char *p, int mode, int flags) { return syscall(SYS_faccessat2, fd, p, mode, flags); }
int main(void) {
    char dir[] = "/tmp/accXXXXXX", file[64], link[64], dangling[64];
    mkdtemp(dir);
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    close(open(file, O_RDWR | O_CREAT, 0444));
    symlink("file", link);
    symlink("nothing", dangling);
    int fd = open(file, O_RDONLY), pipes[2];
    pipe(pipes);
    result("bad flags", faccessat2(AT_FDCWD, file, R_OK, -1));
    result("flag 0x10", faccessat2(AT_FDCWD, file, R_OK, 0x10));
    result("bad mode", faccessat2(AT_FDCWD, file, -1, 0));
    result("dangling", faccessat2(AT_FDCWD, dangling, F_OK, 0));
    result("dangling NOFOLLOW", faccessat2(AT_FDCWD, dangling, F_OK, AT_SYMLINK_NOFOLLOW));
    result("link NOFOLLOW X_OK", faccessat2(AT_FDCWD, link, X_OK, AT_SYMLINK_NOFOLLOW));
    result("link X_OK", faccessat2(AT_FDCWD, link, X_OK, 0));
    result("EMPTY_PATH fd", faccessat2(fd, "", R_OK, AT_EMPTY_PATH));
    result("EMPTY_PATH fd X_OK", faccessat2(fd, "", X_OK, AT_EMPTY_PATH));
    result("empty without flag", faccessat2(fd, "", R_OK, 0));
    result("EMPTY_PATH cwd", faccessat2(AT_FDCWD, "", W_OK, AT_EMPTY_PATH));
    result("EMPTY_PATH pipe", faccessat2(pipes[0], "", R_OK | W_OK, AT_EMPTY_PATH));
    result("EMPTY_PATH bad fd", faccessat2(99, "", R_OK, AT_EMPTY_PATH));
    unlink(file); unlink(link); unlink(dangling); rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "faccessat2_flags", PROGRAM, arch=request.param)


def test_faccessat2_flags_as_natively(program):
    compare_with_native(program, b"dangling NOFOLLOW        0")
