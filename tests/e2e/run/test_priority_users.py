"""setpriority and getpriority name tasks by their real uid and check the caller's right to
change another's (issue 32, LTP setpriority01: PRIO_USER of a user useradd made named no task,
as the model took every task for uid 0). kernel/sys.c: PRIO_USER's `who` 0 is the caller's
real uid; set_one_prio_perm lets a caller whose effective uid is the task's real or effective
uid, or one with CAP_SYS_NICE (root's), else EPERM; can_nice then needs RLIMIT_NICE or
CAP_SYS_NICE to lower a value (EACCES). EXPECTED is the program's output on the reference host,
x86-64 and -m32 alike."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *what, int r) {
    printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int go[2], done[2];
    pipe(go), pipe(done);
    pid_t parent = getpid(), child = fork();
    char c;
    if (child == 0) {
        setresuid(4321, 4321, 4321);
        write(done[1], "r", 1);
        read(go[0], &c, 1);
        report("as 4321, renice root's process", setpriority(PRIO_PROCESS, parent, 3));
        errno = 0;
        int mine = getpriority(PRIO_PROCESS, 0);
        printf("as 4321, my nice: %d\n", mine);
        report("as 4321, lower my nice", setpriority(PRIO_PROCESS, 0, mine - 1));
        report("as 4321, PRIO_USER 0 (mine) to 12", setpriority(PRIO_USER, 0, 12));
        _exit(0);
    }
    read(done[0], &c, 1);
    report("PRIO_USER 4321 to 7", setpriority(PRIO_USER, 4321, 7));
    errno = 0;
    int n = getpriority(PRIO_USER, 4321);
    printf("PRIO_USER 4321: %d %s\n", n, strerror(errno));
    errno = 0;
    n = getpriority(PRIO_USER, 4322);
    printf("PRIO_USER 4322: %d %s\n", n, strerror(errno));
    report("PRIO_PROCESS child to -5", setpriority(PRIO_PROCESS, child, -5));
    write(go[1], "g", 1);
    waitpid(child, NULL, 0);
    return 0;
}
"""
EXPECTED = b"""\
PRIO_USER 4321 to 7: ok
PRIO_USER 4321: 7 Success
PRIO_USER 4322: -1 No such process
PRIO_PROCESS child to -5: ok
as 4321, renice root's process: Operation not permitted
as 4321, my nice: -5
as 4321, lower my nice: Permission denied
as 4321, PRIO_USER 0 (mine) to 12: ok
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_priorities_by_user_and_owner(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "priority_users", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
