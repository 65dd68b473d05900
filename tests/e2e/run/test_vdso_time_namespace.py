"""The vDSO's clocks in a time namespace (LTP clock_gettime03 read CLOCK_MONOTONIC through the
vDSO without the namespace's offset once the vDSO and time namespaces met): a child of a new
namespace with a monotonic offset reads the same clock through libc (the vDSO) as through the
system call, and both carry the offset; the parent's stay unmoved. Built by the host's gcc
(static; -m32 for i386), run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

static long long by_libc(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static long long by_call(clockid_t c) { struct timespec t; syscall(SYS_clock_gettime, c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static void compare(const char *who, long long shift) {
    long long libc = by_libc(CLOCK_MONOTONIC), call = by_call(CLOCK_MONOTONIC);
    long long gap = call - libc;
    printf("%s: libc and the call agree: %s\n", who, gap >= 0 && gap < 1000000000LL ? "yes" : "no");
    printf("%s: shifted by the offset: %s\n", who, libc >= shift ? "yes" : "no");
}

int main(void) {
    long long before = by_libc(CLOCK_MONOTONIC);
    if (unshare(CLONE_NEWTIME)) { perror("unshare"); return 1; }
    int fd = open("/proc/self/timens_offsets", O_WRONLY);
    const char *text = "monotonic 100000 0\n";
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) { perror("offsets"); return 1; }
    close(fd);
    pid_t pid = fork();
    if (pid == 0) {
        compare("child", before + 100000LL * 1000000000LL);
        return 0;
    }
    waitpid(pid, NULL, 0);
    long long parent = by_libc(CLOCK_MONOTONIC);
    printf("parent: unmoved: %s\n", parent - before < 100000LL * 1000000000LL ? "yes" : "no");
    return 0;
}
"""
EXPECTED = ("child: libc and the call agree: yes\nchild: shifted by the offset: yes\n"
            "parent: unmoved: yes\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "vdso_time_namespace", PROGRAM, arch=request.param)


def test_the_vdso_reads_the_namespace_clocks(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
