"""Under ptrace Linux queues even an ignored signal (kernel/signal.c sig_ignored: a ptraced
task's are not checked against their handler), so a traced parent asleep in epoll_wait,
rt_sigtimedwait or semtimedop when its child exits is woken by the child's SIGCHLD, and these
calls, which fail with -EINTR rather than being restarted (fs/eventpoll.c ep_poll,
kernel/signal.c do_sigtimedwait, ipc/sem.c do_semtimedop), return -1 EINTR: the program sees it
under strace -f, and strace shows `= -1 EINTR` then the signal. Untraced, the signal is not
queued and each wait runs its whole timeout. The sandbox's --strace ptraces the program
(kernel_model/debug/ptrace_links.py; signals/delivery.py): its output is the traced native
run's, its trace strace's line for line, the semaphore calls decoded, and an untraced sandbox
run still waits as untraced Linux does. Both arches."""
import subprocess

import pytest

from tests.e2e.forkserver import run_trapline
from tests.e2e.host_tools import ensure_strace
from tests.e2e.static_c import build_static, c_preamble, compare_with_native
from tests.e2e.strace.compare import SANDBOX_LIKE, compare

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%s ") + r"""
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <time.h>

/* a child that exits 10 ms into its parent's 500 ms wait */
static pid_t child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec ts = {0, 10000000};
        clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
        _exit(3);
    }
    return pid;
}

static void reap(pid_t pid) { int status; waitpid(pid, &status, 0); }

int main(void)
{
    struct epoll_event event;
    struct timespec wait = {0, 500000000};
    sigset_t usr1;
    int epoll = epoll_create1(0);
    pid_t pid = child();
    result("epoll_wait", epoll_wait(epoll, &event, 1, 500));
    reap(pid);
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    pid = child();
    result("sigtimedwait", sigtimedwait(&usr1, NULL, &wait));
    reap(pid);
    int sem = semget(IPC_PRIVATE, 1, 0600);
    struct sembuf down = {0, -1, 0};
    pid = child();
    result("semtimedop", semtimedop(sem, &down, 1, &wait));
    reap(pid);
    semctl(sem, 0, IPC_RMID);
    return 0;
}
"""
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.fixture(scope="module", params=("amd64", "i386"))
def program(request, tmp_path_factory):
    arch = request.param
    return arch, build_static(tmp_path_factory, f"ignored_eintr_{arch}", SOURCE,
                              arch=GCC_ARCH[arch])


def test_a_traced_process_s_waits_end_with_eintr_as_under_strace(program, tmp_path):
    arch, path = program
    native = subprocess.run([*SANDBOX_LIKE, ensure_strace(), "-f", "-o",
                             str(tmp_path / "native"), str(path)],
                            capture_output=True, check=True, timeout=60)
    assert native.stdout.count(b" -1 EINTR\n") == 3, native.stdout
    traced = run_trapline(["run", "--strace", "-f", "-o", str(tmp_path / "sandbox"), "--",
                           str(path)], timeout=120)
    assert traced.stdout == native.stdout, traced.stderr.decode(errors="replace")
    result = compare("ignored_eintr", arch, [str(path)], None, follow=True)
    interrupted = [line.split("(", 1)[0] for line in result.native
                   if line.endswith("= -1 EINTR (Interrupted system call)")]
    assert interrupted == ["P0 epoll_wait", "P0 rt_sigtimedwait", "P0 semtimedop"], result.diff()
    assert result.sandbox == result.native, result.diff()


def test_an_untraced_process_s_waits_run_their_timeout(program):
    compare_with_native(program[1], b"epoll_wait 0", b"sigtimedwait -1 EAGAIN",
                        b"semtimedop -1 EAGAIN")
