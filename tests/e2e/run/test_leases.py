"""File leases: F_SETLEASE, F_GETLEASE and their break (issue 32, LTP fcntl23 failed: no lease was
ever granted; fcntl33 broke on a read-only /proc/sys/fs/lease-break-time, then needed a lease
broken by another process's open and truncate). fs/locks.c: check_conflicting_open for read
and write leases, one write lease alone, EAGAIN for F_UNLCK without a lease, EINVAL for a
directory or an unknown type; a break signals the holder once (F_SETSIG's signal with POLL_MSG
and the lease's fd, or SIGIO as SI_KERNEL), a non-blocking breaker gets EAGAIN, a blocking one
waits until the holder gives up the lease while a new lease is refused; F_GETLEASE tells what
the lease is going to; a close drops it. Compared with the native run; built by the host's gcc
(static; -m32 for i386). In the sandbox only (it writes the host's sysctl natively): with
lease-break-time at 1 a holder that never lets go loses its lease after a second."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int hits, code, fd_of, band;

static void handler(int sig, siginfo_t *si, void *ctx) {
    (void)sig; (void)ctx;
    hits++;
    code = si->si_code;
    fd_of = si->si_fd;
    band = si->si_band;
}

static const char *name(long r) { return r < 0 ? strerrorname_np(errno) : ""; }

static void result(const char *what, long r) {
    const char *e = name(r);
    printf("%-44s %ld %s\n", what, r < 0 ? -1L : r, e);
}

static void signals(const char *what) {
    printf("%-44s signals %d code %d fd %d band %#x\n", what, hits, code, fd_of, band);
    hits = code = fd_of = band = 0;
}

/* lease-break-time: a holder that never lets go loses its lease after that many seconds
   (only in the sandbox: natively this would change the host's setting) */
static int break_time_run(void) {
    int sysctl = open("/proc/sys/fs/lease-break-time", O_RDWR);
    char old[16] = {0};
    read(sysctl, old, sizeof old - 1);
    printf("lease-break-time was %s", old);
    pwrite(sysctl, "1\n", 2, 0);
    char now[16] = {0};
    int again = open("/proc/sys/fs/lease-break-time", O_RDONLY);
    read(again, now, sizeof now - 1);
    close(again);
    printf("lease-break-time now %s", now);
    close(open("file", O_CREAT | O_RDWR, 0644));
    int fd = open("file", O_RDONLY);
    sigset_t io;
    sigemptyset(&io);
    sigaddset(&io, SIGIO);
    sigprocmask(SIG_BLOCK, &io, NULL);
    result("F_RDLCK", fcntl(fd, F_SETLEASE, F_RDLCK));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t child = fork();
    if (child == 0) {
        result("  the child's open O_WRONLY", open("file", O_WRONLY));
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("  the child waited %s1 s\n", ms >= 1000 ? ">= " : "< ");
    result("  F_GETLEASE after the break time", fcntl(fd, F_GETLEASE));
    pwrite(sysctl, old, strlen(old), 0);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char dir[] = "/tmp/lsXXXXXX";
    if (!mkdtemp(dir) || chdir(dir)) return 1;
    if (argc > 1)
        return break_time_run();
    close(open("file", O_CREAT | O_RDWR, 0644));
    mkdir("sub", 0755);
    int d = open("sub", O_RDONLY);
    result("F_SETLEASE on a directory", fcntl(d, F_SETLEASE, F_RDLCK));
    int fd = open("file", O_RDONLY);
    result("F_GETLEASE without one", fcntl(fd, F_GETLEASE));
    result("F_SETLEASE F_UNLCK without one", fcntl(fd, F_SETLEASE, F_UNLCK));
    result("F_SETLEASE of type 7", fcntl(fd, F_SETLEASE, 7));
    int rw = open("file", O_RDWR);
    result("F_RDLCK while open for writing", fcntl(fd, F_SETLEASE, F_RDLCK));
    result("F_RDLCK on the writable fd itself", fcntl(rw, F_SETLEASE, F_RDLCK));
    result("F_WRLCK beside another opener", fcntl(fd, F_SETLEASE, F_WRLCK));
    close(rw);
    int other = open("file", O_RDONLY);
    result("F_WRLCK beside a reader", fcntl(fd, F_SETLEASE, F_WRLCK));
    result("F_RDLCK beside a reader", fcntl(fd, F_SETLEASE, F_RDLCK));
    result("F_RDLCK on the reader's own fd", fcntl(other, F_SETLEASE, F_RDLCK));
    result("F_GETLEASE", fcntl(fd, F_GETLEASE));
    result("F_WRLCK beside another's lease", fcntl(fd, F_SETLEASE, F_WRLCK));
    result("the reader's F_UNLCK", fcntl(other, F_SETLEASE, F_UNLCK));
    close(other);
    result("F_WRLCK alone", fcntl(fd, F_SETLEASE, F_WRLCK));
    result("F_GETLEASE", fcntl(fd, F_GETLEASE));

    struct sigaction act = {0};
    act.sa_sigaction = handler;
    act.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN + 2, &act, NULL);
    fcntl(fd, F_SETSIG, SIGRTMIN + 2);
    result("open O_RDONLY|O_NONBLOCK under F_WRLCK", open("file", O_RDONLY | O_NONBLOCK));
    signals("  the holder heard");
    result("  F_GETLEASE (being downgraded)", fcntl(fd, F_GETLEASE));
    result("open it again", open("file", O_RDONLY | O_NONBLOCK));
    signals("  the holder heard");
    result("  downgrade to F_RDLCK", fcntl(fd, F_SETLEASE, F_RDLCK));
    result("  F_GETLEASE", fcntl(fd, F_GETLEASE));
    int reader = open("file", O_RDONLY | O_NONBLOCK);
    result("open O_RDONLY|O_NONBLOCK under F_RDLCK", reader);
    close(reader);
    signals("  the holder heard");
    result("open O_WRONLY|O_NONBLOCK under F_RDLCK", open("file", O_WRONLY | O_NONBLOCK));
    signals("  the holder heard");
    result("  F_GETLEASE (being removed)", fcntl(fd, F_GETLEASE));
    result("  F_SETLEASE F_RDLCK again", fcntl(fd, F_SETLEASE, F_RDLCK));
    result("  F_GETLEASE", fcntl(fd, F_GETLEASE));
    result("  F_SETLEASE F_UNLCK", fcntl(fd, F_SETLEASE, F_UNLCK));
    result("  F_GETLEASE", fcntl(fd, F_GETLEASE));

    /* a child's open for writing and truncate wait until the holder lets go; the default
       SIGIO, blocked, is taken with sigtimedwait */
    sigset_t io;
    sigemptyset(&io);
    sigaddset(&io, SIGIO);
    sigprocmask(SIG_BLOCK, &io, NULL);
    fcntl(fd, F_SETSIG, 0);
    for (int truncating = 0; truncating < 2; truncating++) {
        result(truncating ? "F_RDLCK, then a child truncates" : "F_RDLCK, then a child opens O_RDWR",
               fcntl(fd, F_SETLEASE, F_RDLCK));
        pid_t child = fork();
        if (child == 0) {
            long r = truncating ? truncate("file", 0) : open("file", O_RDWR);
            result("  the child's call", r);
            _exit(0);
        }
        siginfo_t si;
        struct timespec wait = {10, 0};
        int sig = sigtimedwait(&io, &si, &wait);
        printf("  the holder took %s code %d\n", sig == SIGIO ? "SIGIO" : "nothing", si.si_code);
        result("  F_GETLEASE", fcntl(fd, F_GETLEASE));
        result("  F_SETLEASE F_RDLCK (a writer waits)", fcntl(fd, F_SETLEASE, F_RDLCK));
        long unlocked = fcntl(fd, F_SETLEASE, F_UNLCK);
        int status;
        waitpid(child, &status, 0);
        result("  F_SETLEASE F_UNLCK", unlocked);
    }
    result("F_RDLCK, then close the fd", fcntl(fd, F_SETLEASE, F_RDLCK));
    close(fd);
    result("open O_WRONLY|O_NONBLOCK", open("file", O_WRONLY | O_NONBLOCK));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "leases", PROGRAM, arch=request.param)


def test_leases_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"  F_SETLEASE F_RDLCK (a writer waits)        -1 EAGAIN" in native.stdout
    assert b"  the holder took SIGIO code 128" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()


def test_lease_break_time_ends_a_lease(program):
    result = run_sandbox([str(program), "break-time"], rootfs=None)
    assert result.stdout.decode().splitlines() == [
        "lease-break-time was 45",
        "lease-break-time now 1",
        "F_RDLCK                                      0 ",
        "  the child's open O_WRONLY                  5 ",
        "  the child waited >= 1 s",
        "  F_GETLEASE after the break time            2 ",
    ], result.describe()
