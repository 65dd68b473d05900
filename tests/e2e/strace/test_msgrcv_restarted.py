"""A message queue's sleeps end with -ERESTARTNOHAND (ipc/msg.c do_msgrcv, do_msgsnd), not with
-EINTR as the semaphores' do (ipc/sem.c): a signal with a handler fails them with EINTR, one
without (a traced parent's ignored SIGCHLD, queued under ptrace: kernel/signal.c sig_ignored)
has them made again. So a parent asleep in msgrcv under strace -f, whose child exits before
another child sends the message, gets the message: strace shows `= ? ERESTARTNOHAND`, the
SIGCHLD, then msgrcv again. The sandbox ended it with EINTR (the program printed `msgrcv -1
EINTR`) and its strace client showed `= -1 EINTR`. On i386 the program also receives through
ipc(2) as musl does (MSGRCV, version 0: buffer and type in a struct ipc_kludge): a sleep there
is its subcall's. Compared with the native strace -f run, both arches; untraced, the same
output as natively."""
import subprocess

import pytest

from tests.e2e.forkserver import run_trapline
from tests.e2e.host_tools import ensure_strace
from tests.e2e.static_c import build_static, c_preamble, compare_with_native
from tests.e2e.strace.compare import SANDBOX_LIKE, compare

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%s ") + r"""
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

struct message { long mtype; char mtext[16]; };

static void nap(long ms)
{
    struct timespec ts = {0, ms * 1000000};
    clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
}

/* a child that exits 10 ms into the wait, and one that sends the message at 60 ms */
static void receive(const char *what, int q, int through_ipc)
{
    pid_t quick = fork();
    if (quick == 0) {
        nap(10);
        _exit(0);
    }
    pid_t sender = fork();
    if (sender == 0) {
        struct message out = {1, "sent"};
        nap(60);
        msgsnd(q, &out, 5, 0);
        _exit(0);
    }
    struct message in = {0, ""};
    long r;
#ifdef __i386__
    long kludge[2] = {(long)&in, 0};
    if (through_ipc)      /* ipc(MSGRCV, q, size, flags, &kludge) */
        r = syscall(SYS_ipc, 12, q, sizeof in.mtext, 0, kludge, 0);
    else
#endif
        r = msgrcv(q, &in, sizeof in.mtext, 0, 0);
    (void)through_ipc;
    result(what, r);
    waitpid(quick, NULL, 0);
    waitpid(sender, NULL, 0);
}

int main(void)
{
    int q = msgget(IPC_PRIVATE, 0600);
    receive("msgrcv", q, 0);
    receive("ipc-msgrcv", q, 1);
    msgctl(q, IPC_RMID, NULL);
    return 0;
}
"""
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
RESTARTED = "= ? ERESTARTNOHAND (To be restarted if no handler)"


@pytest.fixture(scope="module", params=("amd64", "i386"))
def program(request, tmp_path_factory):
    arch = request.param
    return arch, build_static(tmp_path_factory, f"msgrcv_restarted_{arch}", SOURCE,
                              arch=GCC_ARCH[arch])


def test_a_traced_msgrcv_is_made_again_after_an_ignored_sigchld(program, tmp_path):
    arch, path = program
    native = subprocess.run([*SANDBOX_LIKE, ensure_strace(), "-f", "-o",
                             str(tmp_path / "native"), str(path)],
                            capture_output=True, check=True, timeout=60)
    assert native.stdout == b"msgrcv 5 \nipc-msgrcv 5 \n", native.stdout
    traced = run_trapline(["run", "--strace", "-f", "-o", str(tmp_path / "sandbox"), "--",
                           str(path)], timeout=120)
    assert traced.stdout == native.stdout, traced.stderr.decode(errors="replace")
    result = compare("msgrcv_restarted", arch, [str(path)], None, follow=True)
    calls = [line for line in result.native if line.startswith("P0 msgrcv(")]
    restarted = [line for line in calls if line.endswith(RESTARTED)]
    received = [line for line in calls if line.endswith(") = 5") and 'mtext="sent' in line]
    assert (len(restarted), len(received), len(calls)) == (2, 2, 4), result.diff()
    assert result.sandbox == result.native, result.diff()


def test_untraced_the_message_is_received(program):
    compare_with_native(program[1], b"msgrcv 5 \n", b"ipc-msgrcv 5 \n")
