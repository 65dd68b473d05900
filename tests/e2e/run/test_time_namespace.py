"""Time namespaces (issue 32, LTP clock_gettime03, clock_nanosleep03, timerfd04 and sysinfo03:
CONFIG_TIME_NS was off, so they were skipped). kernel/time/namespace.c: unshare(CLONE_NEWTIME)
makes a namespace for the caller's children (its own clocks stay; /proc/PID/ns/time and
time_for_children differ), /proc/PID/timens_offsets shows and sets its offsets
(timens_offsets_write: EINVAL for an unknown clock or nanoseconds past a second; EACCES in the
initial namespace and once a task entered it), a child's CLOCK_MONOTONIC and CLOCK_BOOTTIME
move by them (CLOCK_REALTIME does not), an absolute sleep is taken back to the host's time,
/proc/uptime and sysinfo's uptime follow CLOCK_BOOTTIME's offset, and setns to the initial
namespace brings the clocks back. A C program built by the host's gcc (static; -m32 for i386),
run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }
static long long now(clockid_t c) { struct timespec t; syscall(SYS_clock_gettime, c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void offsets(const char *when) {
    char text[128] = "";
    int fd = open("/proc/self/timens_offsets", O_RDONLY);
    read(fd, text, sizeof text - 1);
    close(fd);
    printf("%s:\n%s", when, text);
}
static int write_offsets(const char *text) {
    int fd = open("/proc/self/timens_offsets", O_WRONLY);
    int r = write(fd, text, strlen(text));
    close(fd);
    return r;
}
static double proc_uptime(void) {
    double up = 0;
    FILE *f = fopen("/proc/uptime", "r");
    fscanf(f, "%lf", &up);
    fclose(f);
    return up;
}
static long sys_uptime(void) { struct sysinfo si; sysinfo(&si); return si.uptime; }
static unsigned long ino(const char *path) { struct stat st; stat(path, &st); return st.st_ino; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int initial = open("/proc/self/ns/time", O_RDONLY);
    offsets("at start");
    show("write in the initial namespace", write_offsets("monotonic 1 0"));
    show("unshare", syscall(SYS_unshare, CLONE_NEWTIME));
    printf("own namespace kept: %d, children's new: %d\n",
           ino("/proc/self/ns/time") == ino("/proc/self/ns/time_for_children") ? 0 : 1,
           ino("/proc/self/ns/time_for_children") != ino("/proc/self/ns/time"));
    show("bad clock", write_offsets("realtime 1 0"));
    show("nanoseconds past a second", write_offsets("1 1 1000000000"));
    show("set", write_offsets("monotonic 10 0\nboottime -5 500000000\n"));
    offsets("after");
    long long mono = now(CLOCK_MONOTONIC), boot = now(CLOCK_BOOTTIME), real = now(CLOCK_REALTIME);
    double up = proc_uptime();
    long sysup = sys_uptime();
    pid_t child = fork();
    if (child == 0) {
        printf("child in the new one: %d\n", ino("/proc/self/ns/time") == ino("/proc/self/ns/time_for_children"));
        long long boot_moved_ms = (now(CLOCK_BOOTTIME) - boot) / 1000000;
        /* the offset written above plus the time the fork took: a range, since a loaded
           host's fork can take milliseconds */
        printf("monotonic moved %lld s, boottime about -4.5 s: %d, realtime %lld s\n",
               (now(CLOCK_MONOTONIC) - mono + 500000000LL) / 1000000000LL,
               boot_moved_ms >= -4500 && boot_moved_ms < -4300, (now(CLOCK_REALTIME) - real) / 1000000000LL);
        double moved = proc_uptime() - up;
        long sysmoved = sys_uptime() - sysup;
        printf("/proc/uptime moved about -4.5 s: %d, sysinfo's -4 or -5 s: %d\n",
               moved > -4.6 && moved < -4.3, sysmoved == -4 || sysmoved == -5);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 50000000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
        long long before = now(CLOCK_REALTIME);
        show("absolute sleep", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ? -1 : 0);
        printf("slept under a second: %d\n", now(CLOCK_REALTIME) - before < 1000000000LL);
        show("setns back", syscall(SYS_setns, initial, CLONE_NEWTIME));
        printf("monotonic back: %lld s\n", (now(CLOCK_MONOTONIC) - mono + 500000000LL) / 1000000000LL);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    show("set after a child entered", write_offsets("monotonic 20 0"));
    printf("parent's monotonic unmoved: %d\n", now(CLOCK_MONOTONIC) - mono < 1000000000LL);
    return 0;
}
"""
EXPECTED = """at start:
monotonic           0         0
boottime            0         0
write in the initial namespace: Permission denied
unshare: ok
own namespace kept: 1, children's new: 1
bad clock: Invalid argument
nanoseconds past a second: Invalid argument
set: ok
after:
monotonic          10         0
boottime           -5 500000000
child in the new one: 1
monotonic moved 10 s, boottime about -4.5 s: 1, realtime 0 s
/proc/uptime moved about -4.5 s: 1, sysinfo's -4 or -5 s: 1
absolute sleep: ok
slept under a second: 1
setns back: ok
monotonic back: 0 s
set after a child entered: Permission denied
parent's monotonic unmoved: 1
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "time_ns", PROGRAM, arch=request.param)


def test_time_namespace_offsets(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
