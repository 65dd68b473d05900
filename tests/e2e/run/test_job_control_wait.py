"""A parent learns of its child's stop and continue (issue 32, LTP waitid07/08, waitpid08/13):
wait4 with WUNTRACED and WCONTINUED, waitid with WSTOPPED and WNOWAIT, a SIGCHLD handler,
compared with the native run of the same program. Before, waitid refused WSTOPPED (EINVAL) and
wait4 never reported a stopped child (a shell's job control waits so). Built by the host's gcc
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
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t codes[8], count;
static void on_chld(int sig, siginfo_t *info, void *context) { codes[count++ % 8] = info->si_code; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction action = {0};
    action.sa_sigaction = on_chld;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGCHLD, &action, NULL);
    int status;
    int go[2];
    char byte;
    pipe(go);
    pid_t child = fork();
    if (child == 0) {
        raise(SIGSTOP);
        read(go[0], &byte, 1);           /* stopped and continued again in here */
        exit(3);
    }
    pid_t got = waitpid(child, &status, WUNTRACED);
    printf("waitpid WUNTRACED: %d stopped %d sig %d\n", got == child, WIFSTOPPED(status),
           WSTOPSIG(status));
    printf("again, WNOHANG: %d\n", waitpid(child, &status, WUNTRACED | WNOHANG));
    kill(child, SIGCONT);
    got = waitpid(child, &status, WCONTINUED);
    printf("waitpid WCONTINUED: %d continued %d\n", got == child, WIFCONTINUED(status));
    kill(child, SIGSTOP);
    siginfo_t info = {0};
    int r = waitid(P_PID, child, &info, WSTOPPED | WNOWAIT);
    printf("waitid WNOWAIT: %d code %d status %d\n", r, info.si_code, info.si_status);
    r = waitid(P_PID, child, &info, WSTOPPED);
    printf("waitid: %d code %d status %d\n", r, info.si_code, info.si_status);
    kill(child, SIGCONT);
    write(go[1], "g", 1);
    got = waitpid(child, &status, 0);
    printf("exit: %d status %d\n", got == child, WEXITSTATUS(status));
    printf("SIGCHLD handled: %d\n", count > 0);
    return 0;
}
"""
EXPECTED = (b"waitpid WUNTRACED: 1 stopped 1 sig 19\nagain, WNOHANG: 0\n"
            b"waitpid WCONTINUED: 1 continued 1\n"
            b"waitid WNOWAIT: 0 code 5 status 19\nwaitid: 0 code 5 status 19\nexit: 1 status 3\n"
            b"SIGCHLD handled: 1\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "jobs", PROGRAM, arch=request.param)


def test_stops_and_continues_reach_the_parent(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
