"""fs.nr_open is a writable sysctl, and unshare(CLONE_FILES) of a shared table whose fds reach
past it is EMFILE (issue 32, LTP unshare03: writing /proc/sys/fs/nr_open was EACCES). fs/file.c
dup_fd needs a table as large as the open fds reach and alloc_fdtable caps it at nr_open; the
sysctl takes 64 (BITS_PER_LONG) to INT_MAX rounded down to 64, else EINVAL, and prlimit's
RLIMIT_NOFILE limit follows it (EPERM above). Run in the sandbox only: natively it would lower
the host's nr_open while it runs (LTP unshare03 passes natively on both arches)."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_nr_open(const char *value) {
    int fd = open("/proc/sys/fs/nr_open", O_WRONLY);
    if (fd < 0)
        return -errno;
    int r = write(fd, value, strlen(value)) < 0 ? -errno : 0;
    close(fd);
    return r;
}

static void report(const char *what, int r) {
    printf("%s: %s\n", what, r < 0 ? strerror(-r) : "ok");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    report("nr_open 63", set_nr_open("63"));
    report("nr_open 64", set_nr_open("64"));
    struct rlimit rl = {65, 65};
    report("RLIMIT_NOFILE 65", setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0);
    report("nr_open back", set_nr_open("1048576"));
    dup2(2, 65);
    pid_t child = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
    if (child == 0) {
        set_nr_open("64");
        report("unshare with fd 65 and nr_open 64", unshare(CLONE_FILES) ? -errno : 0);
        set_nr_open("128");
        report("with nr_open 128", unshare(CLONE_FILES) ? -errno : 0);
        set_nr_open("1048576");
        _exit(0);
    }
    waitpid(child, NULL, 0);
    return 0;
}
"""
EXPECTED = b"""\
nr_open 63: Invalid argument
nr_open 64: ok
RLIMIT_NOFILE 65: Operation not permitted
nr_open back: ok
unshare with fd 65 and nr_open 64: Too many open files
with nr_open 128: ok
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_unshare_of_files_past_nr_open_is_emfile(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "nr_open_unshare", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
