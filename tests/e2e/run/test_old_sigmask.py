"""i386's one-word signal mask calls (issue 32, LTP getcontext01 got ENOSYS sigprocmask: glibc's
i386 getcontext, setcontext and swapcontext call the old sigprocmask): sigprocmask's three
hows, EINVAL and EFAULT, SIGKILL never blocked, the real-time signals above the word kept by
SIG_SETMASK; sigpending of blocked pending signals; sgetmask and ssetmask; a context saved
and swapped back with its mask. x86-64 has none of these calls. Compared with the native run."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble(shown="r") + r"""
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>

static long old_mask(int how, unsigned *set, unsigned *old) { return syscall(SYS_sigprocmask, how, set, old); }

static ucontext_t main_ctx, side_ctx;
static char side_stack[65536];

static void side(void) {
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("side: SIGUSR2 blocked %d\n", sigismember(&now, SIGUSR2));
    swapcontext(&side_ctx, &main_ctx);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned set = 1u << (SIGUSR1 - 1) | 1u << (SIGKILL - 1), old = 0;
    result("SIG_BLOCK", old_mask(SIG_BLOCK, &set, &old));
    result("read back", old_mask(SIG_BLOCK, NULL, &old));
    printf("  mask %#x\n", old);
    result("bad how", old_mask(7, &set, &old));
    result("bad set", old_mask(SIG_BLOCK, (unsigned *)8, &old));
    result("bad oldset", old_mask(SIG_BLOCK, NULL, (unsigned *)8));
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 2);
    sigprocmask(SIG_BLOCK, &rt, NULL);
    set = 1u << (SIGTERM - 1);
    result("SIG_SETMASK", old_mask(SIG_SETMASK, &set, &old));
    printf("  old %#x\n", old);
    sigset_t full;
    sigprocmask(SIG_BLOCK, NULL, &full);
    printf("  SIGTERM %d SIGUSR1 %d SIGRTMIN+2 kept %d\n", sigismember(&full, SIGTERM),
           sigismember(&full, SIGUSR1), sigismember(&full, SIGRTMIN + 2));
    raise(SIGTERM);
    unsigned pending = 0;
    result("sigpending", syscall(SYS_sigpending, &pending));
    printf("  pending %#x\n", pending);
    result("SIG_UNBLOCK nothing", old_mask(SIG_UNBLOCK, &(unsigned){0}, NULL));
    result("sgetmask", syscall(SYS_sgetmask));
    signal(SIGTERM, SIG_IGN);
    result("ssetmask", syscall(SYS_ssetmask, 1 << (SIGUSR2 - 1) | 1 << (SIGSTOP - 1)));
    result("sgetmask", syscall(SYS_sgetmask));
    sigprocmask(SIG_BLOCK, NULL, &full);
    printf("  SIGRTMIN+2 after ssetmask %d\n", sigismember(&full, SIGRTMIN + 2));
    getcontext(&side_ctx);
    side_ctx.uc_stack.ss_sp = side_stack;
    side_ctx.uc_stack.ss_size = sizeof side_stack;
    side_ctx.uc_link = &main_ctx;
    makecontext(&side_ctx, side, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    result("swapcontext", swapcontext(&main_ctx, &side_ctx));
    sigset_t back;
    sigprocmask(SIG_BLOCK, NULL, &back);
    printf("main: SIGUSR2 blocked %d\n", sigismember(&back, SIGUSR2));
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return build_static(tmp_path_factory, "old_sigmask", PROGRAM, arch="i386")


def test_old_sigmask_calls_as_natively(program):
    compare_with_native(program, b"bad how                    -1 EINVAL", b"side: SIGUSR2 blocked 1",
                        b"main: SIGUSR2 blocked 0", b"SIGRTMIN+2 kept 1")
