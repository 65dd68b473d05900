"""An interrupted sleep's time left goes to the sleeper, not to the process that called last
(issue 32, LTP kill12: "*** stack smashing detected ***" in a child; kill02: a SIGSEGV). The
parent's nanosleep is ended by its child's SIGUSR1; the child made the last call, and the
parent's time left was written at the parent's address in the child's memory (there, on the
canary of the child's own sleep()). Built by the host's gcc (static; -m32 for i386) and
compared with the native run."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

/* The same address in parent and child (fork): the parent's nanosleep writes its time left
   here, and only the parent's copy may change. */
static struct timespec left = {-1, -1};

static void on_usr1(int sig) { (void)sig; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;                     /* no SA_RESTART */
    sigaction(SIGUSR1, &sa, NULL);
    int done[2];
    pipe(done);
    pid_t child = fork();
    if (child == 0) {
        char byte;
        close(done[1]);
        fcntl(done[0], F_SETFL, O_NONBLOCK);

        struct timespec pause = {0, 10 * 1000 * 1000};
        do {                                     /* until the parent's sleep has ended */
            kill(getppid(), SIGUSR1);
            nanosleep(&pause, NULL);
        } while (read(done[0], &byte, 1) != 1);
        printf("child's copy: %ld %ld\n", (long)left.tv_sec, (long)left.tv_nsec);
        return 0;
    }
    close(done[0]);
    struct timespec req = {60, 0};
    int r = nanosleep(&req, &left);
    int e = errno;
    printf("parent: %d %s, time left over 50 s: %d\n", r, r ? strerror(e) : "", left.tv_sec >= 50);
    write(done[1], "x", 1);
    int status;
    waitpid(child, &status, 0);
    printf("child exit %d\n", WEXITSTATUS(status));
    return 0;
}
"""
EXPECTED = (b"parent: -1 Interrupted system call, time left over 50 s: 1\n"
            b"child's copy: -1 -1\nchild exit 0\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "left", PROGRAM, arch=request.param)


def test_time_left_of_an_interrupted_sleep_stays_with_the_sleeper(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
