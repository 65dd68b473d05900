"""clone(CLONE_PARENT) makes the new process the caller's sibling (issue 32, LTP clone08: its
getppid was the caller's pid): its parent is the caller's parent, which waits for it, with the
caller's exit signal; compared with the native run. Built by the host's gcc (static; -m32 for
i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t top = getpid();
    pid_t middle = fork();
    if (middle == 0) {
        long sibling = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
        if (sibling == 0) {
            printf("sibling's parent is the top: %d\n", getppid() == top);
            _exit(5);
        }
        _exit(4);
    }
    int status, codes = 0;
    for (int i = 0; i < 2; i++) {
        pid_t got = wait(&status);
        codes += got > 0 ? WEXITSTATUS(status) : 100;
    }
    printf("top reaped both: %d, no more: %d\n", codes == 9, wait(&status) == -1);
    return 0;
}
"""
EXPECTED = b"sibling's parent is the top: 1\ntop reaped both: 1, no more: 1\n"


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "sibling", PROGRAM, arch=request.param)


def test_clone_parent_makes_a_sibling(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
