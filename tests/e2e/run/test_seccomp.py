"""Seccomp in the guest (issue 32, LTP seccomp01): strict mode and classic-BPF filters with
each action, checked against the same program's native run (gcc, static; -m32 for i386). Before,
strict mode was EINVAL and a filter passed its checks but was never installed (EINVAL).
The program: the load-time refusals (a jump past the end, an unaligned load, no RET last, a
scratch slot read before it is stored, MOD; length 0; EFAULT; unknown operation; strict mode
with flags; GET_ACTION_AVAIL), then one forked child per case: strict mode (write allowed,
getppid SIGKILL), ERRNO, TRAP (SIGSYS's si_code, si_errno, si_syscall, si_arch; the result
register holds the call number), KILL_PROCESS (SIGSYS), three stacked filters (the newest of
the strictest wins; LOG allows), a blocked SIGSYS that still kills, TRACE without a tracer
(ENOSYS), a filter kept across fork."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __x86_64__
#define ARCH AUDIT_ARCH_X86_64
#else
#define ARCH AUDIT_ARCH_I386
#endif
#define NR offsetof(struct seccomp_data, nr)

/* nr == which ? ret : ALLOW, after an arch check that kills a foreign ABI */
static int install(int which, unsigned ret, unsigned flags) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, which, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, ret),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static volatile int trapped_code, trapped_errno, trapped_nr;
static volatile unsigned trapped_arch;
static void on_sigsys(int sig, siginfo_t *info, void *uc) {
    trapped_code = info->si_code;
    trapped_errno = info->si_errno;
    trapped_nr = info->si_syscall;
    trapped_arch = info->si_arch;
}

static void child_case(int n) {
    char line[160];
    long r;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    switch (n) {
    case 0:                                        /* strict: write works, getppid kills */
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
        write(1, "strict: write allowed\n", 22);
        syscall(SYS_getppid);
        write(1, "strict: survived\n", 17);
        syscall(SYS_exit, 0);
    case 1:                                        /* ERRNO: the call returns -data */
        install(SYS_getppid, SECCOMP_RET_ERRNO | 42, 0);
        r = syscall(SYS_getppid);
        snprintf(line, sizeof line, "errno: getppid %ld errno %d, getpid ok %d\n", r, errno,
                 syscall(SYS_getpid) > 0);
        write(1, line, strlen(line));
        _exit(0);
    case 2: {                                      /* TRAP: SIGSYS with the call's details */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigsys;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSYS, &sa, NULL);
        install(SYS_getppid, SECCOMP_RET_TRAP | 7, 0);
        r = syscall(SYS_getppid);
        snprintf(line, sizeof line, "trap: returned nr %d, code %d errno %d nr %d arch ok %d\n",
                 r == SYS_getppid, trapped_code, trapped_errno, trapped_nr == SYS_getppid,
                 trapped_arch == ARCH);
        write(1, line, strlen(line));
        _exit(0);
    }
    case 3:                                        /* KILL_PROCESS */
        install(SYS_getppid, SECCOMP_RET_KILL_PROCESS, 0);
        syscall(SYS_getppid);
        _exit(0);
    case 4:                                        /* two filters: the strictest wins */
        install(SYS_getppid, SECCOMP_RET_ERRNO | 5, 0);
        install(SYS_getppid, SECCOMP_RET_LOG, SECCOMP_FILTER_FLAG_LOG);
        install(SYS_getppid, SECCOMP_RET_ERRNO | 9, 0);
        r = syscall(SYS_getppid);
        snprintf(line, sizeof line, "stacked: %ld errno %d, mode %d\n", r, errno,
                 prctl(PR_GET_SECCOMP));
        write(1, line, strlen(line));
        _exit(0);
    case 5: {                                      /* a trap ignored or blocked still kills */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGSYS);
        sigprocmask(SIG_BLOCK, &set, NULL);
        install(SYS_getppid, SECCOMP_RET_TRAP, 0);
        syscall(SYS_getppid);
        _exit(0);
    }
    case 6:                                        /* TRACE without a tracer: ENOSYS */
        install(SYS_getppid, SECCOMP_RET_TRACE, 0);
        r = syscall(SYS_getppid);
        snprintf(line, sizeof line, "trace: %ld errno %d\n", r, errno);
        write(1, line, strlen(line));
        _exit(0);
    case 7:                                        /* a forked child keeps the filter */
        install(SYS_getppid, SECCOMP_RET_ERRNO | 3, 0);
        if (fork() == 0) {
            r = syscall(SYS_getppid);
            snprintf(line, sizeof line, "inherited: %ld errno %d\n", r, errno);
            write(1, line, strlen(line));
            _exit(0);
        }
        wait(NULL);
        _exit(0);
    }
}

static void checks(void) {
    struct sock_filter bad_jump[] = {BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
                                     BPF_STMT(BPF_RET | BPF_K, 0)};
    struct sock_filter unaligned[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
                                      BPF_STMT(BPF_RET | BPF_K, 0)};
    struct sock_filter no_ret[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0)};
    struct sock_filter uninit[] = {BPF_STMT(BPF_LD | BPF_MEM, 3), BPF_STMT(BPF_RET | BPF_A, 0)};
    struct sock_filter mod[] = {BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), BPF_STMT(BPF_RET | BPF_A, 0)};
    struct sock_filter *progs[] = {bad_jump, unaligned, no_ret, uninit, mod};
    unsigned short lens[] = {2, 2, 1, 2, 2};
    for (int i = 0; i < 5; i++) {
        struct sock_fprog p = {lens[i], progs[i]};
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p);
        printf("check %d: %ld %s\n", i, r, r ? strerror(errno) : "");
    }
    struct sock_fprog empty = {0, bad_jump};
    printf("empty: %s\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &empty) ? strerror(errno) : "ok");
    printf("fault: %s\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)8) ? strerror(errno) : "ok");
    printf("bad op: %s\n", syscall(SYS_seccomp, 77, 0, NULL) ? strerror(errno) : "ok");
    printf("strict with flags: %s\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) ? strerror(errno) : "ok");
    unsigned action = SECCOMP_RET_ERRNO, unknown = 0x12340000;
    printf("avail errno %ld, unknown %s\n", syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action),
           syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &unknown) ? strerror(errno) : "ok");
    printf("mode %d\n", prctl(PR_GET_SECCOMP));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    checks();
    for (int n = 0; n < 8; n++) {
        int status;
        pid_t pid = fork();
        if (pid == 0)
            child_case(n);
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("case %d: killed by %s\n", n, strsignal(WTERMSIG(status)));
        else
            printf("case %d: exit %d\n", n, WEXITSTATUS(status));
    }
    return 0;
}
"""
EXPECTED = """check 0: -1 Invalid argument
check 1: -1 Invalid argument
check 2: -1 Invalid argument
check 3: -1 Invalid argument
check 4: -1 Invalid argument
empty: Invalid argument
fault: Bad address
bad op: Invalid argument
strict with flags: Invalid argument
avail errno 0, unknown Operation not supported
mode 0
strict: write allowed
case 0: killed by Killed
errno: getppid -1 errno 42, getpid ok 1
case 1: exit 0
trap: returned nr 1, code 1 errno 7 nr 1 arch ok 1
case 2: exit 0
case 3: killed by Bad system call
stacked: -1 errno 9, mode 2
case 4: exit 0
case 5: killed by Bad system call
trace: -1 errno 38
case 6: exit 0
inherited: -1 errno 3
case 7: exit 0
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "seccomp_guest", PROGRAM, arch=request.param)


def test_seccomp_modes_and_filter_actions_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
