"""prctl's effects on other tasks, compared with the native run of the same program (issue 32,
LTP prctl06-10): a child subreaper adopts its orphaned grandchild, which is sent its
parent-death signal when its parent exits; PR_TSC_SIGSEGV makes RDTSC fault. Before, the
grandchild went to init without a signal and RDTSC read the clock. Built by the host's gcc
(static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static void on_signal(int sig) { got = sig; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int ready[2], status;
    pid_t top = getpid();
    pipe(ready);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t middle = fork();
    if (middle == 0) {
        if (fork() == 0) {
            signal(SIGUSR1, on_signal);
            prctl(PR_SET_PDEATHSIG, SIGUSR1);
            write(ready[1], "r", 1);
            while (!got)
                pause();
            printf("orphan: signal %d, adopted by the subreaper: %d\n", got, getppid() == top);
            exit(7);
        }
        char byte;
        read(ready[0], &byte, 1);
        exit(0);
    }
    waitpid(middle, &status, 0);
    pid_t adopted = wait(&status);
    printf("reaped the grandchild: %d, status %d\n", adopted > 0 && adopted != middle,
           WEXITSTATUS(status));
    if (fork() == 0) {
        unsigned lo, hi;
        prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
        __asm__ volatile ("rdtsc" : "=a"(lo), "=d"(hi));
        exit(0);
    }
    wait(&status);
    printf("rdtsc under PR_TSC_SIGSEGV: signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
"""
EXPECTED = (b"orphan: signal 10, adopted by the subreaper: 1\nreaped the grandchild: 1, status 7\n"
            b"rdtsc under PR_TSC_SIGSEGV: signal 11\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "tasks", PROGRAM, arch=request.param)


def test_subreaper_parent_death_signal_and_tsc(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
