"""The calls that name a task by number take it in the caller's pid namespace (find_vpid):
the init of a new namespace names itself 1 to sched_getaffinity, prlimit, getpriority,
sched_getparam, sched_getscheduler, kcmp and getpgid (its group's leader is outside: 0), and
a number no task of its namespace has is ESRCH. prlimit and kcmp were ESRCH for 1 (taken as
the sandbox's init's global pid). A C program (static; -m32 for i386), run natively for the
reference (as root)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static void show(const char *what, long r) { printf("%-40s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : ""); }
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    unshare(CLONE_NEWPID);
    pid_t init = fork();
    if (init == 0) {
        cpu_set_t set;
        struct rlimit rl;
        struct sched_param sp;
        show("sched_getaffinity(1)", sched_getaffinity(1, sizeof set, &set) < 0 ? -1 : 0);
        show("sched_getaffinity(2): none", sched_getaffinity(2, sizeof set, &set) < 0 ? -1 : 0);
        show("prlimit(1)", prlimit(1, RLIMIT_NOFILE, NULL, &rl));
        show("getpriority(PRIO_PROCESS, 1)", getpriority(PRIO_PROCESS, 1) < 0 && errno ? -1 : 0);
        errno = 0;
        show("getpriority(PRIO_PROCESS, 5): none", getpriority(PRIO_PROCESS, 5) == -1 && errno ? -1 : 0);
        show("sched_getparam(1)", sched_getparam(1, &sp));
        show("sched_getscheduler(1)", sched_getscheduler(1));
        show("kcmp(1, 1, KCMP_VM)", syscall(SYS_kcmp, 1, 1, 1, 0, 0));
        show("getpgid(1)", getpgid(1));
        _exit(0);
    }
    waitpid(init, NULL, 0);
    return 0;
}
"""
EXPECTED = """sched_getaffinity(1)                     0 
sched_getaffinity(2): none               -1 ESRCH
prlimit(1)                               0 
getpriority(PRIO_PROCESS, 1)             0 
getpriority(PRIO_PROCESS, 5): none       -1 ESRCH
sched_getparam(1)                        0 
sched_getscheduler(1)                    0 
kcmp(1, 1, KCMP_VM)                      0 
getpgid(1)                               0 
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pid_ns_calls", PROGRAM, arch=request.param)


def test_task_numbers_are_the_callers_namespace(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
