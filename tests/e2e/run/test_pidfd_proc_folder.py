"""pidfd_send_signal takes a /proc/PID folder as a pidfd and sends the caller's siginfo
(issue 32, LTP pidfd_send_signal01: EBADF for /proc/self, and the siginfo's si_value was
dropped for SI_USER's): kernel/signal.c pidfd_to_pid (tgid_pidfd_to_pid for a /proc/PID
folder; EBADF for other files; ESRCH once reaped) and copy_siginfo_from_user_any (EINVAL when
it names another signal, EPERM when it claims the kernel or tgkill towards another process).
A C program built by the host's gcc (static; -m32 for i386), run natively for the reference."""
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int got_value, got_code;
static void on_usr1(int sig, siginfo_t *si, void *uc) { got_value = si->si_value.sival_int; got_code = si->si_code; }
static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR1, &sa, NULL);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGUSR1;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_value.sival_int = 4242;
    int self = open("/proc/self", O_DIRECTORY | O_CLOEXEC);
    show("/proc/self with a siginfo", syscall(SYS_pidfd_send_signal, self, SIGUSR1, &info, 0));
    printf("handler: value %d code %d\n", got_value, got_code);
    show("signal mismatch", syscall(SYS_pidfd_send_signal, self, SIGUSR2, &info, 0));
    int file = open("/proc/self/status", O_RDONLY);
    show("a file", syscall(SYS_pidfd_send_signal, file, SIGUSR1, NULL, 0));
    pid_t child = fork();
    if (child == 0) { pause(); _exit(0); }
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", child);
    int dir = open(path, O_DIRECTORY);
    info.si_code = SI_USER;
    show("SI_USER siginfo to another", syscall(SYS_pidfd_send_signal, dir, SIGUSR1, &info, 0));
    show("SIGTERM to the child's folder", syscall(SYS_pidfd_send_signal, dir, SIGTERM, NULL, 0));
    int status;
    waitpid(child, &status, 0);
    printf("child: %s\n", WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
    show("after it is reaped", syscall(SYS_pidfd_send_signal, dir, SIGTERM, NULL, 0));
    return 0;
}
"""
EXPECTED = """/proc/self with a siginfo: ok
handler: value 4242 code -1
signal mismatch: Invalid argument
a file: Bad file descriptor
SI_USER siginfo to another: Operation not permitted
SIGTERM to the child's folder: ok
child: Terminated
after it is reaped: No such process
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pidfd_proc", PROGRAM, arch=request.param)


def test_a_proc_folder_is_a_pidfd_for_pidfd_send_signal(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
