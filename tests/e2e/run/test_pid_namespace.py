"""PID namespaces (issue 32, LTP clone301, ioctl_ns01, ioctl_ns05, unshare05: CONFIG_PID_NS was off
and CLONE_NEWPID EPERM). kernel/pid_namespace.c, kernel/pid.c: clone3(CLONE_NEWPID) makes a child
that is pid 1 of a new namespace, and its exit ends its parent's wait4 as any child's does;
unshare(CLONE_NEWPID) leaves the caller where it is (/proc/self/ns/pid kept, pid_for_children
new; a second one before a child is EINVAL) and its next child is pid 1 there, with no parent
it can see (getppid 0), two numbers in /proc/self/status's NSpid (the last 1), its own
ns_last_pid, NS_GET_PARENT refused above its own namespace
(EPERM), its children numbered 2, 3... and its orphans adopted by it; it ignores a signal it
has no handler for from inside; its exit kills what is left of the namespace (a child left in
pause(): the run ends) and a later fork into the dead namespace is ENOMEM. A C program built by
the host's gcc (static; -m32 for i386), run natively for the reference (as root)."""
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sched.h>
#include <stdint.h>
#include <unistd.h>
#define NS_GET_PARENT 0xb702
#define NS_GET_NSTYPE 0xb703

static int got;
static void note(int sig) { got = sig; }
static unsigned long ino(const char *path) { struct stat st; if (stat(path, &st)) return 0; return st.st_ino; }
static void show(const char *what, long r) { printf("%-40s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : ""); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    /* clone3(CLONE_NEWPID): the child's exit ends a wait4 in progress, with SIGCHLD caught
       without SA_RESTART (LTP clone301) */
    int cstatus;
    struct sigaction sa = { .sa_handler = note };
    sigaction(SIGCHLD, &sa, NULL);
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_NEWPID;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
        printf("clone3 child: getpid %d\n", getpid());
        _exit(0);
    }
    long w = waitpid(pid, &cstatus, __WALL);
    printf("clone3 parent: waited %d %s, SIGCHLD caught %d\n", w == pid, w < 0 ? strerrorname_np(errno) : "", got == SIGCHLD);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &sa, NULL);
    unsigned long mine = ino("/proc/self/ns/pid");
    int fd = open("/proc/self/ns/pid", O_RDONLY);
    show("NS_GET_PARENT of the initial", ioctl(fd, NS_GET_PARENT));
    show("NS_GET_NSTYPE", ioctl(fd, NS_GET_NSTYPE));
    show("unshare(CLONE_NEWPID)", syscall(SYS_unshare, CLONE_NEWPID));
    printf("own kept: %d, children's new: %d\n", ino("/proc/self/ns/pid") == mine,
           ino("/proc/self/ns/pid_for_children") != mine);
    show("second unshare before a child", syscall(SYS_unshare, CLONE_NEWPID));
    pid_t init = fork();
    if (init == 0) {
        printf("init: getpid %d getppid %d\n", getpid(), getppid());
        char stext[4096] = "";
        int sfd = open("/proc/self/status", O_RDONLY);
        read(sfd, stext, sizeof stext - 1);
        close(sfd);
        char *nspid = strstr(stext, "\nNSpid:");
        if (nspid) {
            char *end = strchr(nspid + 1, '\n');
            *end = 0;
            char *last = strrchr(nspid, '\t');
            printf("init: /proc/self/status NSpid has %d numbers, the last %s\n",
                   (int)(strchr(nspid + 8, '\t') != NULL) + 1, last + 1);
        }
        char text[32] = "";
        int last = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
        read(last, text, sizeof text - 1);
        printf("init: ns_last_pid %s\n", text);
        int pfd = open("/proc/self/ns/pid", O_RDONLY);
        show("init: NS_GET_PARENT above its own", ioctl(pfd, NS_GET_PARENT));
        int ready[2];
        pipe(ready);
        pid_t child = fork();
        if (child == 0) {
            printf("child: getpid %d getppid %d\n", getpid(), getppid());
            write(ready[1], "x", 1);
            pause();
            _exit(0);
        }
        read(ready[0], text, 1);
        printf("init: forked %d\n", child);
        pid_t grandchild = fork();
        if (grandchild == 0) {
            pid_t orphan = fork();
            if (orphan == 0) {
                usleep(100000);
                printf("orphan: getppid %d\n", getppid());
                _exit(3);
            }
            _exit(0);
        }
        printf("init: waited %d\n", waitpid(grandchild, NULL, 0));
        int status;
        printf("init: reaped the orphan %d\n", wait(&status) > 0 && WEXITSTATUS(status) == 3);
        show("init: kill(1, SIGTERM) ignored", kill(1, SIGTERM));
        show("init: kill(child, SIGTERM)", kill(child, SIGTERM));
        printf("init: waited %d\n", waitpid(child, &status, 0));
        pid_t last_child = fork();
        if (last_child == 0) { pause(); _exit(0); }
        _exit(7);
    }
    int status;
    pid_t waited = waitpid(init, &status, 0);
    printf("parent: child's pid is a number of ours: %d\n", init > 1);
    printf("parent: waited right one %d status %#x\n", waited == init, status);
    show("parent: fork into the dead namespace", fork());
    return 0;
}
"""
EXPECTED = """clone3 child: getpid 1
clone3 parent: waited 1 , SIGCHLD caught 1
NS_GET_PARENT of the initial             -1 EPERM
NS_GET_NSTYPE                            536870912 
unshare(CLONE_NEWPID)                    0 
own kept: 1, children's new: 1
second unshare before a child            -1 EINVAL
init: getpid 1 getppid 0
init: /proc/self/status NSpid has 2 numbers, the last 1
init: ns_last_pid 1

init: NS_GET_PARENT above its own        -1 EPERM
child: getpid 2 getppid 1
init: forked 2
init: waited 3
orphan: getppid 1
init: reaped the orphan 1
init: kill(1, SIGTERM) ignored           0 
init: kill(child, SIGTERM)               0 
init: waited 2
parent: child's pid is a number of ours: 1
parent: waited right one 1 status 0x700
parent: fork into the dead namespace     -1 ENOMEM
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pid_ns", PROGRAM, arch=request.param)


def test_pid_namespace_numbers_reaper_and_end(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
