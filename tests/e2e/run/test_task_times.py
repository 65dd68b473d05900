"""times(2), getrusage(2) and wait4's rusage split CPU time into user and system time, and a
waited-for child's goes to its parent (issue 32, LTP times03: tms_stime was always 0 and the
children's times were never kept). time/task_times.py: a preempted slice's instructions are
the running thread's user time, each system call's fixed cost its caller's system time, sleeps
nobody's; wait4 and waitid add the child's and its children's times to the parent's
(wait_task_zombie), wait4's rusage is the child's. EXPECTED is the program's output on the
reference host, x86-64 and -m32 alike (the program arms an alarm while it computes: a lone
task with nothing due runs unsliced in the sandbox and is charged nothing, task_times.py)."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin_user(void) {
    alarm(100);                    /* something due: the sandbox slices the loop and charges it */
    for (unsigned long i = 0; i < 30000000UL; i++)
        sink += i;
    alarm(0);
}

static void spin_system(void) {
    for (int i = 0; i < 200000; i++)
        syscall(SYS_getppid);
}

static long us(struct timeval t) { return t.tv_sec * 1000000L + t.tv_usec; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct tms t0, t1, t2, t3;
    struct rusage self0, self1, child, children, thread;
    times(&t0);
    getrusage(RUSAGE_SELF, &self0);
    printf("start: utime, stime at most 5 ticks: %d\n", t0.tms_utime <= 5 && t0.tms_stime <= 5);
    spin_user();
    times(&t1);
    printf("a user loop: utime grew %d, stime grew by less %d\n", t1.tms_utime > t0.tms_utime,
           t1.tms_stime - t0.tms_stime < t1.tms_utime - t0.tms_utime);
    spin_system();
    times(&t2);
    getrusage(RUSAGE_SELF, &self1);
    printf("a syscall loop: stime grew %d\n", t2.tms_stime > t1.tms_stime);
    printf("rusage grew: user %d system %d\n", us(self1.ru_utime) > us(self0.ru_utime),
           us(self1.ru_stime) > us(self0.ru_stime));
    getrusage(RUSAGE_THREAD, &thread);
    printf("one thread: RUSAGE_THREAD's user is RUSAGE_SELF's %d\n",
           us(thread.ru_utime) == us(self1.ru_utime));
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    times(&t3);
    printf("a sleep is no CPU time: %d\n", t3.tms_utime - t2.tms_utime <= 1 && t3.tms_stime - t2.tms_stime <= 1);
    printf("no child yet: cutime %ld cstime %ld\n", (long)t3.tms_cutime, (long)t3.tms_cstime);
    pid_t pid = fork();
    if (pid == 0) {
        struct tms c;
        times(&c);
        printf("child starts at 0: %d\n", c.tms_utime == 0 && c.tms_stime <= 1);
        spin_user();
        spin_system();
        _exit(0);
    }
    int status;
    wait4(pid, &status, 0, &child);
    getrusage(RUSAGE_CHILDREN, &children);
    times(&t3);
    printf("waited: cutime %d cstime %d, wait4's rusage is RUSAGE_CHILDREN's %d\n",
           t3.tms_cutime > 0, t3.tms_cstime > 0,
           us(child.ru_utime) == us(children.ru_utime) && us(child.ru_stime) == us(children.ru_stime));
    return 0;
}
"""
EXPECTED = b"""\
start: utime, stime at most 5 ticks: 1
a user loop: utime grew 1, stime grew by less 1
a syscall loop: stime grew 1
rusage grew: user 1 system 1
one thread: RUSAGE_THREAD's user is RUSAGE_SELF's 1
a sleep is no CPU time: 1
no child yet: cutime 0 cstime 0
child starts at 0: 1
waited: cutime 1 cstime 1, wait4's rusage is RUSAGE_CHILDREN's 1
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_user_and_system_time_and_the_childrens(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "task_times", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
