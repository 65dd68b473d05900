"""A signal whose frame cannot be written gets the thread a forced SIGSEGV instead of killing it
(issue 32, LTP signal06: its handler's alternate stack is made read-only by another thread;
the process died "cannot build the frame"). kernel/signal.c signal_setup_done -> force_sigsegv:
the handler does not run and SIGSEGV's own handler runs where it can; a blocked SIGSEGV is
unblocked with the default action (force_sig_info_to_task), and when SIGSEGV's own frame fails
the process dies of it (force_fatal_sig). A C program built by the host's gcc (static; -m32 for i386), run natively
for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static char altstack[4096 * 4] __attribute__((aligned(4096)));
static volatile int usr1, segv;

static void on_usr1(int sig) { usr1++; }
static void on_segv(int sig) { segv++; }

static void handle(int sig, void (*fn)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

static const char *child(int block, int segv_flags) {
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t set;
        sigemptyset(&set);
        if (block)
            sigaddset(&set, SIGSEGV);
        sigprocmask(SIG_BLOCK, &set, NULL);
        handle(SIGSEGV, on_segv, segv_flags);
        raise(SIGUSR1);
        _exit(segv);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited";
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&st, NULL);
    mprotect(altstack, sizeof altstack, PROT_READ);
    handle(SIGUSR1, on_usr1, SA_ONSTACK);
    handle(SIGSEGV, on_segv, 0);                   /* on the thread's own stack */
    raise(SIGUSR1);
    printf("usr1 %d segv %d\n", usr1, segv);
    /* a blocked SIGSEGV is unblocked and reset to the default: fatal */
    printf("blocked: %s\n", child(1, 0));
    /* SIGSEGV's own frame fails: fatal */
    printf("own frame: %s\n", child(0, SA_ONSTACK));
    return 0;
}
"""
EXPECTED = "usr1 0 segv 1\nblocked: Segmentation fault\nown frame: Segmentation fault\n"


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "frame_fault", PROGRAM, arch=request.param)


def test_a_frame_that_cannot_be_written_forces_sigsegv(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
