"""kernel.ns_last_pid sets where pids continue, and a reused pid is a new process to /proc
(issue 32, LTP pidfd_send_signal03: TCONF, /proc/sys/kernel/ns_last_pid did not exist).
kernel/pid_namespace.c pid_ns_ctl_handler (CONFIG_CHECKPOINT_RESTORE): writing N (0..pid_max)
makes the next pid the first free one after N (alloc_pid's idr_alloc_cyclic; the model's
pids skip those in use). A /proc/PID folder opened for the first process stays that
process's (it holds its struct pid): once reaped, pidfd_send_signal through it is ESRCH even
though a new process has the pid, and the new one's folder is a new inode. EXPECTED is the
program's output on the reference host in a new pid namespace (`unshare -pf --mount-proc`,
so the host's pids were not touched), x86-64 and -m32 alike."""
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
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_last(int value) {
    char text[16];
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
    if (fd < 0)
        return -errno;
    int n = snprintf(text, sizeof text, "%d", value);
    int r = write(fd, text, n) < 0 ? -errno : 0;
    close(fd);
    return r;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pid_t first = fork();
    if (first == 0)
        _exit(0);
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", first);
    int folder = open(path, O_DIRECTORY | O_CLOEXEC);
    struct stat before, after;
    fstat(folder, &before);
    waitpid(first, NULL, 0);
    int r = set_last(first - 1);
    printf("ns_last_pid written: %s\n", r < 0 ? strerror(-r) : "ok");
    pid_t again = fork();
    if (again == 0) {
        pause();
        _exit(0);
    }
    printf("the next child has the freed pid: %d\n", again == first);
    int fresh = open(path, O_DIRECTORY | O_CLOEXEC);
    fstat(fresh, &after);
    printf("a new inode: %d\n", before.st_ino != after.st_ino);
    long s = syscall(SYS_pidfd_send_signal, folder, SIGUSR1, NULL, 0);
    printf("the old folder's signal: %s\n", s < 0 ? strerror(errno) : "sent");
    s = syscall(SYS_pidfd_send_signal, fresh, SIGKILL, NULL, 0);
    printf("the new folder's signal: %s\n", s < 0 ? strerror(errno) : "sent");
    int status;
    waitpid(again, &status, 0);
    printf("killed: %d\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    printf("ns_last_pid below 0: %s\n", strerror(-set_last(-1)));
    return 0;
}
"""
EXPECTED = b"""\
ns_last_pid written: ok
the next child has the freed pid: 1
a new inode: 1
the old folder's signal: No such process
the new folder's signal: sent
killed: 1
ns_last_pid below 0: Invalid argument
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_a_reused_pid_is_a_new_process(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "ns_last_pid", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
