"""mount(2), umount2, and the mount, UTS and IPC namespaces (issue 32, LTP unshare01, unshare04,
mount_setattr02, madvise01, cachestat03, mount08, pivot_root01 and setns02: every mount and
every new namespace but time's was EPERM).

A C program built by the host's gcc (static; -m32 for i386) that first makes its own mount
namespace and makes "/" private in it, so that natively nothing it mounts reaches the host's
(the namespace goes with the process): a tmpfs with options on a new folder of /tmp (statfs,
the root's mode, /proc/self/mountinfo's and /proc/self/mounts' lines, with the folder's name
left out), statx's mount id (mountinfo's) and STATX_ATTR_MOUNT_ROOT, rmdir of the mount point
(EBUSY), umount of a folder that is no mount (EINVAL), a
bind mount of a folder of the tmpfs (its files seen at both places, mountinfo's root field), a
remount read-only (EBUSY while a file is open for writing; then EROFS for every change, by path
or descriptor, and access(W_OK); reading still allowed) and back (the atime flag kept), a read-
only bind remount (EROFS through the bind, not beside it), MS_SHARED and MS_SLAVE, umount of a
mount with one beneath it (EBUSY) and MNT_DETACH; the errnos of unknown types, a block file
system on a folder and a bad tmpfs option; clone of a new IPC namespace sharing the semaphore
undo list (EINVAL); utimes of a NULL name (EFAULT, do_utimes: not the cwd's descriptor); then a
new UTS namespace (sethostname in it, which kernel.hostname shows, setns back) and a new IPC
namespace (a segment of the first is not found in it, is after setns back). The sandbox must
print what the native run printed.
"""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <sched.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <signal.h>
static char dir[64];
/* the lines of a /proc/self file that name the folder, the folder's name replaced by D and
   mountinfo's mount ids and device left out */
static void show_lines(const char *file, int skip) {
    char line[512];
    FILE *f = fopen(file, "r");
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, dir), *p = line;
        if (!at) continue;
        for (int i = 0; i < skip; i++) p = strchr(p, ' ') + 1;
        fwrite(p, 1, at - p, stdout);
        printf("D%s", at + strlen(dir));
    }
    fclose(f);
}
static void path(char *out, const char *name) { sprintf(out, "%s/%s", dir, name); }
/* the id mountinfo gives the mount on `point` */
static long mount_id(const char *point) {
    char line[512], at[256];
    long id = -1, got;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%ld %*d %*s %*s %255s", &got, at) == 2 && !strcmp(at, point)) id = got;
    fclose(f);
    return id;
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char a[96], b[96], c[96], f[96], ns_before[64], ns_after[64];
    int mnt0 = open("/proc/self/ns/mnt", O_RDONLY);
    readlink("/proc/self/ns/mnt", ns_before, sizeof ns_before);
    result("unshare NEWNS", unshare(CLONE_NEWNS));
    readlink("/proc/self/ns/mnt", ns_after, sizeof ns_after);
    printf("mnt namespace changed %d\n", strcmp(ns_before, ns_after) != 0);
    result("make / private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
    strcpy(dir, "/tmp/tl-mnt-XXXXXX");
    mkdtemp(dir);
    result("mount tmpfs", mount("tl-src", dir, "tmpfs", MS_NOATIME | MS_NODEV, "size=1m,mode=700"));
    struct statfs sf;
    struct stat st;
    statfs(dir, &sf);
    stat(dir, &st);
    printf("statfs type %lx bytes %ld; root mode %o\n", (long)sf.f_type,
           (long)(sf.f_blocks * sf.f_bsize), st.st_mode);
    show_lines("/proc/self/mountinfo", 3);
    show_lines("/proc/self/mounts", 0);
    struct statx sx;
    statx(AT_FDCWD, dir, 0, 0x1000 /* STATX_MNT_ID */, &sx);
    printf("statx: mountinfo's id %d, mount root %d\n", (long)sx.stx_mnt_id == mount_id(dir),
           !!(sx.stx_attributes & 0x2000 /* STATX_ATTR_MOUNT_ROOT */));
    result("rmdir mount point", rmdir(dir));
    path(a, "a"); path(b, "b"); path(c, "c"); path(f, "c/f");
    mkdir(a, 0755); mkdir(b, 0755); mkdir(c, 0755);
    result("umount no mount", umount2(a, 0));
    result("bind b on c", mount(b, c, NULL, MS_BIND, NULL));
    int writer = open(f, O_CREAT | O_WRONLY, 0644);
    result("create through c", writer >= 0 ? 0 : -1);
    path(f, "b/f");
    result("seen in b", access(f, F_OK));
    result("remount ro, a writer", mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL));
    result("bind ro, a writer", mount(NULL, c, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL));
    close(writer);
    result("remount ro", mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL));
    show_lines("/proc/self/mountinfo", 3);
    result("write-open on ro", open(f, O_WRONLY));
    result("read-open on ro", open(f, O_RDONLY) >= 0 ? 0 : -1);
    result("chmod on ro", chmod(f, 0600));
    result("access W_OK on ro", access(f, W_OK));
    result("access R_OK on ro", access(f, R_OK));
    int reader = open(f, O_RDONLY);
    result("fchmod on ro", fchmod(reader, 0600));
    result("fchown on ro", fchown(reader, 0, 0));
    close(reader);
    path(a, "b/l");
    result("link on ro", link(f, a));
    result("unlink on ro", unlink(f));
    path(f, "b/g");
    result("create on ro", open(f, O_CREAT | O_WRONLY, 0644));
    result("mkdir on ro", mkdir(f, 0755));
    result("remount rw", mount(NULL, dir, NULL, MS_REMOUNT, NULL));
    result("bind remount ro", mount(NULL, c, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL));
    path(f, "c/h");
    result("create through ro bind", open(f, O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
    path(f, "b/h");
    result("create beside it", open(f, O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
    result("shared", mount(NULL, dir, NULL, MS_SHARED, NULL));
    show_lines("/proc/self/mountinfo", 3);
    result("slave without peers", mount(NULL, dir, NULL, MS_SLAVE, NULL));
    show_lines("/proc/self/mountinfo", 3);
    result("two types", mount(NULL, dir, NULL, MS_SHARED | MS_PRIVATE, NULL));
    result("umount busy", umount2(dir, 0));
    result("umount detach", umount2(dir, MNT_DETACH));
    statfs(dir, &sf);
    printf("after: tmpfs %d\n", sf.f_type == 0x01021994);
    result("umount again", umount2(dir, 0));
    result("utimes NULL", syscall(SYS_utimes, NULL, NULL));
    result("unknown type", mount("x", dir, "nosuchfs", 0, NULL));
    result("ext4 on a folder", mount(dir, dir, "ext4", 0, NULL));
    result("ext4 without source", mount(NULL, dir, "ext4", 0, NULL));
    result("bad tmpfs option", mount("x", dir, "tmpfs", 0, "bogus=1"));
    result("no type", mount("x", dir, NULL, 0, NULL));
    rmdir(dir);
    struct utsname u0, u1;
    uname(&u0);
    int uts0 = open("/proc/self/ns/uts", O_RDONLY);
    result("unshare NEWUTS", unshare(CLONE_NEWUTS));
    result("sethostname", sethostname("tl-inner", 8));
    uname(&u1);
    printf("inner name %s\n", u1.nodename);
    char sysctl[80] = "";
    FILE *hn = fopen("/proc/sys/kernel/hostname", "r");
    fgets(sysctl, sizeof sysctl, hn);
    fclose(hn);
    printf("kernel.hostname %s", sysctl);
    result("setns uts back", setns(uts0, CLONE_NEWUTS));
    uname(&u1);
    printf("name back %d\n", strcmp(u0.nodename, u1.nodename) == 0);
    result("clone NEWIPC|SYSVSEM",
           syscall(SYS_clone, CLONE_NEWIPC | CLONE_SYSVSEM | SIGCHLD, 0, 0, 0, 0));
    int id = shmget(0x7e5701, 4096, IPC_CREAT | 0600);
    int ipc0 = open("/proc/self/ns/ipc", O_RDONLY);
    result("unshare NEWIPC", unshare(CLONE_NEWIPC));
    result("segment in new ns", shmget(0x7e5701, 0, 0) >= 0 ? 0 : -1);
    result("setns ipc back", setns(ipc0, CLONE_NEWIPC));
    result("segment back", shmget(0x7e5701, 0, 0) == id ? 0 : -1);
    shmctl(id, IPC_RMID, NULL);
    chdir("/tmp");
    result("setns mnt back", setns(mnt0, CLONE_NEWNS));
    char cwd[64];
    printf("cwd after setns %s\n", getcwd(cwd, sizeof cwd));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "mount_ns", PROGRAM, arch=request.param)


def test_mounts_and_namespaces(program):
    compare_with_native(program, b"mount tmpfs                0", b"shared:",
                        b"umount busy                -1 EBUSY", b"inner name tl-inner",
                        b"create through ro bind     -1 EROFS", b"mountinfo's id 1, mount root 1",
                        b"segment in new ns          -1 ENOENT")
