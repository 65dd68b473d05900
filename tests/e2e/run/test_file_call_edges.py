"""Four edge cases LTP found in the file calls (issue 32): fstatat with an unknown flag is EINVAL
(vfs_statx; fstatat01 got 0); a *at call relative to a removed directory is ENOENT, not
ENOTDIR (linkat01: the lookup in a dead directory finds nothing); O_NOATIME on a file the
caller does not own is EPERM (may_open; open02); and RLIMIT_FSIZE cuts a write to what fits
below it and refuses one at or past it with EFBIG and SIGXFSZ (generic_write_check_limits;
llseek01), for regular files only. Compared with the native run (its output through a pipe,
which the limit does not bound); built by the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-28s ") + r"""
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(void) {
    char dir[] = "/tmp/miscXXXXXX", path[64], gone[64];
    mkdtemp(dir);
    chmod(dir, 0755);
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(gone, sizeof gone, "%s/gone", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    struct stat st;
    int dirfd = open(dir, O_DIRECTORY);
    result("fstatat flags 9999", fstatat(dirfd, "file", &st, 9999));
    result("fstatat NO_AUTOMOUNT", fstatat(dirfd, "file", &st, AT_NO_AUTOMOUNT));
    mkdir(gone, 0755);
    int gonefd = open(gone, O_DIRECTORY);
    rmdir(gone);
    result("linkat from removed dir", linkat(gonefd, "file", AT_FDCWD, "x", 0));
    result("linkat into removed dir", linkat(dirfd, "file", gonefd, "x", 0));
    result("openat in removed dir", openat(gonefd, "new", O_RDWR | O_CREAT, 0644));
    result("fstatat in removed dir", fstatat(gonefd, "file", &st, 0));

    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGXFSZ);
    sigprocmask(SIG_BLOCK, &block, NULL);
    struct rlimit limit = {100, 100};
    setrlimit(RLIMIT_FSIZE, &limit);
    char buf[64] = {0};
    result("write 64", write(fd, buf, 64));
    result("write 64 more (36 fit)", write(fd, buf, 64));
    result("write at the limit", write(fd, buf, 1));
    result("write 0 at the limit", write(fd, buf, 0));
    result("pwrite at 90", pwrite(fd, buf, 20, 90));
    result("pwrite at 200", pwrite(fd, buf, 20, 200));
    lseek(fd, 150, SEEK_SET);
    result("write after lseek past", write(fd, buf, 1));
    int p[2];
    pipe(p);
    result("pipe write ignores it", write(p[1], buf, 64) + write(p[1], buf, 64));
    struct timespec zero = {0, 0};
    printf("SIGXFSZ pending: %d\n", sigtimedwait(&block, NULL, &zero) == SIGXFSZ);
    fstat(fd, &st);
    printf("size %ld\n", (long)st.st_size);

    fflush(stdout);
    if (fork() == 0) {
        setresuid(65534, 65534, 65534);
        result("O_NOATIME not owner", open(path, O_RDONLY | O_NOATIME));
        result("O_RDONLY not owner", open(path, O_RDONLY));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    result("O_NOATIME owner", open(path, O_RDONLY | O_NOATIME));
    unlink(path);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "file_call_edges", PROGRAM, arch=request.param)


def test_file_call_edges_as_natively(program):
    compare_with_native(program, b"write 64 more (36 fit)       36",
                        b"O_NOATIME not owner          -1 EPERM")
