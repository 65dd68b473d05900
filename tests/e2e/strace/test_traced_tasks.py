"""What strace's ptrace changes for the program, beyond its trace: which tasks are traced, as
/proc/PID/status's TracerPid shows them, PTRACE_TRACEME's EPERM, and a call a fatal signal
interrupts.

strace seizes the program's first task; without -f it follows neither its threads nor its
children (no PTRACE_O_TRACECLONE, TRACEFORK), with -f both, and /proc shows TracerPid in each
traced task's status, 0 in the others' (fs/proc/array.c task_state). The sandbox's strace
client says the same to the kernel (kernel_model/debug/ptrace_links.py; the new tasks inherit
it as Linux's copy_process does, kernel_model/ptraced.py): a program printing its own, its
thread's and its child's TracerPid prints what it prints under strace and strace -f on the
host (the program's parent, strace, is its tracer; the sandbox's tools stand where its init
is, the program's parent), and under neither, 0 for all (before, it was 0 in the sandbox
under --strace too).

A fatal signal (SIGTERM, default action) that meets a traced task asleep in epoll_wait wakes
it, and the call returns -EINTR before the task stops for its tracer and dies (kernel/signal.c
complete_signal leaves a ptraced task's fatal signal to get_signal): strace prints the call's
`= -1 EINTR` line, then the signal, then `+++ killed by SIGTERM +++` (before, the sandbox's
trace left the call unfinished). Both arches."""
import subprocess

import pytest

from tests.e2e.forkserver import run_trapline
from tests.e2e.host_tools import ensure_strace
from tests.e2e.static_c import STATE_OF_C, build_static, compare_with_native
from tests.e2e.strace.compare import SANDBOX_LIKE, compare

pytestmark = pytest.mark.e2e

TASKS = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "0", "parent" (the tracer started the program: its parent) or "other" (a child's, traced by
   its parent's tracer): the pids themselves differ from run to run natively */
static void tracer_pid(const char *who, const char *status_path)
{
    char line[256];
    long tracer = -1, parent = -1;
    FILE *status = fopen(status_path, "r");
    while (status && fgets(line, sizeof line, status)) {
        sscanf(line, "TracerPid: %ld", &tracer);
        sscanf(line, "PPid: %ld", &parent);
    }
    if (status) fclose(status);
    printf("%s TracerPid %s\n", who, tracer == 0 ? "0" : tracer == parent ? "parent" : "other");
    fflush(stdout);
}

static void *thread(void *unused)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", gettid());
    tracer_pid("thread", path);
    return unused;
}

int main(void)
{
    pthread_t other;
    tracer_pid("main", "/proc/self/status");
    pthread_create(&other, NULL, thread, NULL);
    pthread_join(other, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tracer_pid("child", "/proc/self/status");
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return 0;
}
"""
KILLED = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

/* The parent's state in /proc/PID/stat: 'S' once it sleeps in epoll_wait (its one sleeping
   call), so the signal meets it there whatever the host's speed. */
""" + STATE_OF_C + r"""
int main(void)
{
    struct epoll_event event;
    int epoll = epoll_create1(0);
    pid_t parent = getpid();
    if (fork() == 0) {
        struct timespec ms = {0, 1000000};
        while (state_of(parent) != 'S')
            nanosleep(&ms, NULL);
        kill(parent, SIGTERM);
        _exit(0);
    }
    epoll_wait(epoll, &event, 1, 3000);
    return 0;
}
"""
# the child's polling of /proc (as many rounds as the host's timing makes) is left out
KILLED_CALLS = ("-e", "trace=epoll_create1,epoll_wait,kill")
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.fixture(scope="module", params=("amd64", "i386"))
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def tasks(arch, tmp_path_factory):
    return build_static(tmp_path_factory, f"traced_tasks_{arch}", TASKS, ("-pthread",),
                        arch=GCC_ARCH[arch])


@pytest.mark.parametrize("follow", ((), ("-f",)), ids=("first-task", "followed"))
def test_the_traced_tasks_show_a_tracer_pid_as_under_strace(tasks, follow, tmp_path):
    native = subprocess.run([*SANDBOX_LIKE, ensure_strace(), *follow, "-o", str(tmp_path / "native"),
                             str(tasks)], capture_output=True, check=True, timeout=60)
    thread, child = (b"parent", b"other") if follow else (b"0", b"0")
    assert native.stdout == (b"main TracerPid parent\nthread TracerPid %s\nchild TracerPid %s\n"
                             % (thread, child)), native.stdout
    traced = run_trapline(["run", "--strace", *follow, "-o", str(tmp_path / "sandbox"), "--",
                           str(tasks)], timeout=120)
    assert traced.stdout == native.stdout, traced.stderr.decode(errors="replace")


def test_untraced_tasks_show_none(tasks):
    compare_with_native(tasks, b"main TracerPid 0", b"thread TracerPid 0", b"child TracerPid 0")


def test_a_fatal_signal_ends_epoll_wait_before_the_task_dies(arch, tmp_path_factory):
    path = build_static(tmp_path_factory, f"killed_in_epoll_{arch}", KILLED, arch=GCC_ARCH[arch])
    result = compare("killed_in_epoll", arch, [str(path)], None, follow=True, options=KILLED_CALLS)
    ending = [line for line in result.native if line.startswith("P0 ")][-3:]
    assert ending[0].endswith("= -1 EINTR (Interrupted system call)"), result.diff()
    assert ending[1].startswith("P0 --- SIGTERM ") and ending[2] == "P0 +++ killed by SIGTERM +++"
    assert result.sandbox == result.native, result.diff()


TRACEME = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

int main(void)
{
    long r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    printf("traceme %ld %s\n", r, r < 0 ? strerrorname_np(errno) : "");
    return 0;
}
"""


def test_a_traced_task_s_ptrace_traceme_fails_with_eperm(arch, tmp_path_factory):
    """ptrace_traceme: EPERM when the task is traced already (untraced, it would make the
    parent its tracer: a guest tracer, not modeled, ENOSYS)."""
    path = build_static(tmp_path_factory, f"traceme_{arch}", TRACEME, arch=GCC_ARCH[arch])
    result = compare("traceme", arch, [str(path)], None)
    assert "ptrace(PTRACE_TRACEME) = -1 EPERM (Operation not permitted)" in result.native
    assert result.sandbox == result.native, result.diff()
