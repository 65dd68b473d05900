"""A process made with clone(CLONE_FILES) that exits leaves the fd table it shares open for
the others (kernel/exit.c exit_files -> put_files_struct: the fds close with the table's last
user). The sandbox closed every fd of the shared table at the child's exit, so the parent's
stdout was gone (EBADF) once its child died. Compared with the native run; built by the
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
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[65536];

static int child(void *fd) {
    return write(*(int *)fd, "child\n", 6) == 6 ? 0 : 1;
}

int main(void) {
    int pipes[2];
    pipe(pipes);
    int fd = pipes[1];
    pid_t pid = clone(child, stack + sizeof stack, CLONE_FILES | SIGCHLD, &fd);
    int status;
    waitpid(pid, &status, 0);
    char text[16] = {0};
    read(pipes[0], text, sizeof text - 1);
    printf("child exit %d, wrote %s", WEXITSTATUS(status), text);
    printf("write end still open: %d\n", fcntl(fd, F_GETFD) >= 0);
    printf("stdout still open: %d\n", fcntl(1, F_GETFD) >= 0);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "clone_files_exit", PROGRAM, arch=request.param)


def test_the_shared_table_outlives_the_child(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout.endswith(b"write end still open: 1\nstdout still open: 1\n")
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
