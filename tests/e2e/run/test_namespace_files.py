"""/proc/PID/ns and the namespace files it opens (issue 32, LTP ioctl_ns03 and setns01: the
folder did not exist, so open failed with ENOENT and setns01 found no namespace to try).
fs/proc/namespaces.c (the ten links, "KIND:[INODE]"), fs/nsfs.c (a read-only regular file of
that inode; ns_ioctl: NS_GET_NSTYPE, NS_GET_PARENT: EPERM above the initial pid and user
namespaces, EINVAL for kinds with no hierarchy; NS_GET_USERNS: a close-on-exec descriptor of the
user namespace, EPERM for that one itself; NS_GET_OWNER_UID: EINVAL but for a user namespace;
ENOTTY for the rest) and kernel/nsproxy.c setns (the type must match, joining one's own user
namespace is EINVAL, the others need CAP_SYS_ADMIN). A C program built by the host's gcc
(static; -m32 for i386), run natively for the reference; it prints no inode number, which a
container's namespaces change."""
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>
#define NS_GET_USERNS 0xb701
#define NS_GET_PARENT 0xb702
#define NS_GET_NSTYPE 0xb703
#define NS_GET_OWNER_UID 0xb704
static unsigned long user_ns_ino(void) {
    struct stat st;
    stat("/proc/self/ns/user", &st);
    return st.st_ino;
}
static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *kinds[] = {"cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts"};
    int types[] = {CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWPID, 0x80, 0x80, CLONE_NEWUSER, CLONE_NEWUTS};
    char path[64], text[64];
    for (int i = 0; i < 10; i++) {
        snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
        ssize_t n = readlink(path, text, sizeof text - 1);
        text[n > 0 ? n : 0] = 0;
        struct stat st;
        int fd = open(path, O_RDONLY);
        fstat(fd, &st);
        char named[64];
        snprintf(named, sizeof named, "%.*s:[%lu]", (int)strcspn(kinds[i], "_"), kinds[i], (unsigned long)st.st_ino);
        if (!strcmp(kinds[i], "pid_for_children")) snprintf(named, sizeof named, "pid:[%lu]", (unsigned long)st.st_ino);
        if (!strcmp(kinds[i], "time_for_children")) snprintf(named, sizeof named, "time:[%lu]", (unsigned long)st.st_ino);
        printf("%s: link names its inode %d, access %d, mode %o, type ok %d", kinds[i], !strcmp(text, named),
               access(path, R_OK), st.st_mode, ioctl(fd, NS_GET_NSTYPE) == types[i]);
        errno = 0;
        long parent = ioctl(fd, NS_GET_PARENT);
        printf(" parent %s", parent < 0 ? strerror(errno) : "fd");
        errno = 0;
        long user = ioctl(fd, NS_GET_USERNS);
        if (user >= 0) { struct stat us; fstat(user, &us); printf(" userns is user's %d cloexec %d", us.st_ino == user_ns_ino(), fcntl(user, F_GETFD)); close(user); }
        else printf(" userns %s", strerror(errno));
        unsigned uid = 77;
        errno = 0;
        long r = ioctl(fd, NS_GET_OWNER_UID, &uid);
        printf(" owner %s\n", r < 0 ? strerror(errno) : "ok");
        close(fd);
    }
    char buf[8];
    int uts = open("/proc/self/ns/uts", O_RDONLY);
    show("read", read(uts, buf, sizeof buf));
    show("ioctl 0x5401", ioctl(uts, 0x5401, buf));
    show("setns uts, 0", syscall(SYS_setns, uts, 0));
    show("setns uts, CLONE_NEWUTS", syscall(SYS_setns, uts, CLONE_NEWUTS));
    show("setns uts, CLONE_NEWIPC", syscall(SYS_setns, uts, CLONE_NEWIPC));
    show("setns uts, -1", syscall(SYS_setns, uts, -1));
    int user = open("/proc/self/ns/user", O_RDONLY);
    show("setns user", syscall(SYS_setns, user, 0));
    int mnt = open("/proc/self/ns/mnt", O_RDONLY);
    show("setns mnt", syscall(SYS_setns, mnt, 0));
    int pid = open("/proc/self/ns/pid", O_RDONLY);
    show("setns pid", syscall(SYS_setns, pid, 0));
    seteuid(65534);
    show("setns uts as nobody", syscall(SYS_setns, uts, 0));
    show("setns user as nobody", syscall(SYS_setns, user, 0));
    seteuid(0);
    show("setns regular file", syscall(SYS_setns, 0 + open("/proc/self/status", O_RDONLY), 0));
    show("setns bad fd", syscall(SYS_setns, 99, 0));
    show("chdir to ns", chdir("/proc/self/ns/uts"));
    DIR *d = opendir("/proc/self/ns");
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d))) count += e->d_name[0] != '.';
    printf("entries %d\n", count);
    return 0;
}
"""
EXPECTED = """cgroup: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
ipc: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
mnt: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
net: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
pid: link names its inode 1, access 0, mode 100444, type ok 1 parent Operation not permitted userns is user's 1 cloexec 1 owner Invalid argument
pid_for_children: link names its inode 1, access 0, mode 100444, type ok 1 parent Operation not permitted userns is user's 1 cloexec 1 owner Invalid argument
time: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
time_for_children: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
user: link names its inode 1, access 0, mode 100444, type ok 1 parent Operation not permitted userns Operation not permitted owner ok
uts: link names its inode 1, access 0, mode 100444, type ok 1 parent Invalid argument userns is user's 1 cloexec 1 owner Invalid argument
read: Invalid argument
ioctl 0x5401: Inappropriate ioctl for device
setns uts, 0: ok
setns uts, CLONE_NEWUTS: ok
setns uts, CLONE_NEWIPC: Invalid argument
setns uts, -1: Invalid argument
setns user: Invalid argument
setns mnt: ok
setns pid: ok
setns uts as nobody: Operation not permitted
setns user as nobody: Invalid argument
setns regular file: Invalid argument
setns bad fd: Bad file descriptor
chdir to ns: Not a directory
entries 10
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "ns_files", PROGRAM, arch=request.param)


def test_namespace_files_and_setns(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
