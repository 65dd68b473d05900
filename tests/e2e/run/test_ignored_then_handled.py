"""A handled signal ends a sleep even when an ignored one is dequeued before it in the same
delivery (issue 32, LTP kill12: its child, sent SIGHUP, ignored, then SIGCHLD, handled, slept
its whole second again after the handler, where Linux's nanosleep returns EINTR). The ignored
signal forgot which call the thread slept in, so the handled one found none to end. Built by
the host's gcc (static; -m32 for i386) and compared with the native run; before the fix the
child's 60 s sleep went on through every pair of signals."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { (void)sig; handled++; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int ready[2], done[2];
    pipe(ready);
    pipe2(done, O_NONBLOCK);
    pid_t child = fork();
    if (child == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGHUP, &sa, NULL);
        sa.sa_handler = on_usr1;                 /* no SA_RESTART */
        sigaction(SIGUSR1, &sa, NULL);
        struct timespec req = {60, 0}, rem = {-1, -1};
        write(ready[1], "r", 1);
        int r = nanosleep(&req, &rem);
        int e = errno;
        printf("child: %d %s, handled %d, time left over 50 s: %d\n", r, r ? strerror(e) : "",
               handled > 0, rem.tv_sec >= 50);
        write(done[1], "d", 1);
        return 0;
    }
    char byte;
    read(ready[0], &byte, 1);
    struct timespec pause = {0, 10 * 1000 * 1000};
    int tries = 0;
    do {            /* an ignored signal, then a handled one, until the child's sleep ended */
        nanosleep(&pause, NULL);
        kill(child, SIGHUP);
        kill(child, SIGUSR1);
    } while (read(done[0], &byte, 1) != 1 && ++tries < 50);
    if (tries == 50) {
        printf("the child's sleep went on through 50 signals\n");
        kill(child, SIGKILL);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child exit %d\n", WEXITSTATUS(status));
    return 0;
}
"""
EXPECTED = b"child: -1 Interrupted system call, handled 1, time left over 50 s: 1\nchild exit 0\n"


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "both", PROGRAM, arch=request.param)


def test_a_handled_signal_after_an_ignored_one_ends_the_sleep(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
