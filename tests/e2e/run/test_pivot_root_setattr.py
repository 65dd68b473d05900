"""pivot_root(2), mount_setattr(2), hugetlbfs and a bind mount onto a magic link (issue 32,
LTP pivot_root01, mount_setattr02, cachestat03 and mount08).

A C program built by the host's gcc (static; -m32 for i386), in a mount namespace of its own
with "/" private (natively nothing reaches the host's mounts): mount_setattr's checks
(fs/namespace.c build_mount_kattr, copy_struct_from_user) and its changes as mountinfo shows
them; a hugetlbfs mount (statfs's magic and block size, its mountinfo options, cachestat of
its file: EOPNOTSUPP); mount(MS_BIND) onto /proc/self/fd/N of an O_PATH descriptor of a
/proc/self/fd link (ENOENT); and a child that chroots into a tmpfs mount and pivots its root
to another (the EBUSY, EINVAL and ENOTDIR cases of SYSCALL pivot_root first), then finds the
old root under put_old. The sandbox must print what the native run printed.
"""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <sched.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
struct attr { uint64_t set, clr, propagation, userns_fd; uint64_t tail; };
static char dir[64];
static void show_mountinfo(void) {
    char line[512];
    FILE *f = fopen("/proc/self/mountinfo", "r");
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, dir), *p = line;
        if (!at) continue;
        for (int i = 0; i < 3; i++) p = strchr(p, ' ') + 1;
        fwrite(p, 1, at - p, stdout);
        printf("D%s", at + strlen(dir));
    }
    fclose(f);
}
static long setattr(const char *path, unsigned flags, struct attr *a, unsigned size) {
    return syscall(442, -1, path, flags, a, size);
}
static int pivot_child(void) {
    char sub[96];
    sprintf(sub, "%s/root", dir);
    mkdir(sub, 0755);
    result("child: tmpfs root", mount("none", sub, "tmpfs", 0, NULL));
    result("child: chroot", chroot(sub));
    chdir("/");
    mkdir("/new", 0755); mkdir("/put", 0755);
    result("pivot: new not a mount", syscall(SYS_pivot_root, "/new", "/put"));
    result("child: tmpfs new", mount("none", "/new", "tmpfs", 0, NULL));
    mkdir("/new/old", 0755);
    close(open("/new/file", O_CREAT | O_WRONLY, 0644));
    result("pivot: put_old on root", syscall(SYS_pivot_root, "/new", "/put"));
    result("pivot: put_old a file", syscall(SYS_pivot_root, "/new", "/new/file"));
    result("pivot: put_old not under", syscall(SYS_pivot_root, "/new", "/"));
    result("pivot", syscall(SYS_pivot_root, "/new", "/new/old"));
    result("old root's put", access("/old/put", F_OK));
    result("new root's file", access("/file", F_OK));
    result("umount old root", umount2("/old", MNT_DETACH));
    result("old root gone", access("/old/put", F_OK));
    return 0;
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    result("unshare NEWNS", unshare(CLONE_NEWNS));
    result("make / private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
    strcpy(dir, "/tmp/tl-pivot-XXXXXX");
    mkdtemp(dir);
    result("mount tmpfs", mount("tl", dir, "tmpfs", 0, NULL));
    struct attr a = {0};
    result("setattr nothing", setattr(dir, 0, &a, 32));
    result("setattr bad flags", setattr(dir, 1, &a, 32));
    result("setattr small", setattr(dir, 0, &a, 16));
    a.tail = 1;
    result("setattr tail", setattr(dir, 0, &a, 40));
    a.tail = 0;
    a.set = 0x2 | 0x8;                              /* NOSUID | NOEXEC */
    result("setattr nosuid noexec", setattr(dir, 0, &a, 40));
    show_mountinfo();
    a.set = 0x10;                                   /* NOATIME without clearing the field */
    result("setattr atime alone", setattr(dir, 0, &a, 32));
    a.clr = 0x70;
    result("setattr noatime", setattr(dir, 0, &a, 32));
    a.set = a.clr = 0;
    a.propagation = MS_SHARED;
    result("setattr shared", setattr(dir, 0, &a, 32));
    show_mountinfo();
    a.propagation = MS_SHARED | MS_SLAVE;
    result("setattr two types", setattr(dir, 0, &a, 32));
    a.propagation = MS_PRIVATE;
    char sub[96], file[128];
    sprintf(sub, "%s/sub", dir);
    mkdir(sub, 0755);
    result("setattr not a mount", setattr(sub, 0, &a, 32));
    result("setattr private", setattr(dir, 0, &a, 32));
    result("mount hugetlbfs", mount("none", sub, "hugetlbfs", 0, NULL));
    struct statfs sf;
    statfs(sub, &sf);
    printf("hugetlbfs magic %lx bsize %ld\n", (long)sf.f_type, (long)sf.f_bsize);
    show_mountinfo();
    sprintf(file, "%s/f", sub);
    int huge = open(file, O_CREAT | O_RDWR, 0600);
    uint64_t range[2] = {0, 0}, cs[5];
    result("cachestat hugetlbfs", syscall(451, huge, range, cs, 0));
    close(huge);
    result("umount hugetlbfs", umount2(sub, 0));
    char foo[96], bar[96], link[64];
    sprintf(foo, "%s/foo", dir); sprintf(bar, "%s/bar", dir);
    close(open(foo, O_CREAT | O_WRONLY, 0644)); close(open(bar, O_CREAT | O_WRONLY, 0644));
    int fd = open(foo, O_RDONLY);
    sprintf(link, "/proc/self/fd/%d", fd);
    int pfd = open(link, O_PATH | O_NOFOLLOW);
    sprintf(link, "/proc/self/fd/%d", pfd);
    result("bind onto O_PATH link", mount(bar, link, "", MS_BIND, NULL));
    close(fd); close(pfd);
    pid_t child = fork();
    if (child == 0) _exit(pivot_child());
    int status;
    waitpid(child, &status, 0);
    printf("child status %d\n", status);
    result("umount tmpfs", umount2(dir, MNT_DETACH));
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pivot_setattr", PROGRAM, arch=request.param)


def test_pivot_root_mount_setattr_and_hugetlbfs(program):
    compare_with_native(program, b"pivot                      0", b"shared:",
                        b"cachestat hugetlbfs        -1 EOPNOTSUPP",
                        b"bind onto O_PATH link      -1 ENOENT")
