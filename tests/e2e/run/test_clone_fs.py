"""clone(CLONE_FS) shares the fs_struct: cwd, root and umask (issue 32, LTP kcmp03: kcmp(KCMP_FS)
of a CLONE_FS child and its parent said they differ). kernel/fork.c copy_fs shares it, a
chdir, fchdir or umask of either is the other's, unshare(CLONE_FS) gives a copy of its own
(unshare_fs), kcmp compares it (kernel/kcmp.c). Compared with the native run; built by the
host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/cfsXXXXXX";
static int stage;

static int child_main(void *arg) {
    (void)arg;
    if (stage == 0) {
        chdir(dir);
        umask(0077);
    } else if (stage == 1) {
        syscall(SYS_unshare, CLONE_FS);
        chdir("/");
        umask(0022);
    } else {
        int fd = open(dir, O_RDONLY);
        fchdir(fd);
    }
    long same = syscall(SYS_kcmp, getppid(), getpid(), KCMP_FS, 0, 0);
    printf("  child: kcmp(parent, child, KCMP_FS) differs: %d\n", same != 0);
    return 0;
}

static void show(const char *what) {
    char cwd[256];
    mode_t old = umask(0);
    umask(old);
    getcwd(cwd, sizeof cwd);
    printf("%-38s cwd is the folder: %d umask %03o\n", what, strcmp(cwd, dir) == 0, old);
}

static void run(int flags, const char *what) {
    static char stack[1 << 16];
    pid_t pid = clone(child_main, stack + sizeof stack, flags | SIGCHLD, NULL);
    int status;
    waitpid(pid, &status, 0);
    show(what);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!mkdtemp(dir)) return 1;
    umask(0022);
    chdir("/");
    show("start");
    stage = 0;
    run(0, "after a plain child's chdir, umask");
    run(CLONE_FS, "after a CLONE_FS child's chdir, umask");
    stage = 1;
    run(CLONE_FS, "after one that unshared CLONE_FS");
    chdir("/");
    stage = 2;
    run(CLONE_FS, "after a CLONE_FS child's fchdir");
    if (fork() == 0) {
        printf("  fork: kcmp(parent, child, KCMP_FS) differs: %d\n",
               syscall(SYS_kcmp, getppid(), getpid(), KCMP_FS, 0, 0) != 0L);
        _exit(0);
    }
    wait(NULL);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "clone_fs", PROGRAM, arch=request.param)


def test_clone_fs_shares_cwd_and_umask_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"after a CLONE_FS child's chdir, umask  cwd is the folder: 1 umask 077" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
