"""Landlock and lsm_list_modules (issue 32, LTP landlock01-03/07-10: every call was ENOSYS).
A static C program checks the calls' errnos in Linux's order (security/landlock/syscalls.c),
the 16-layer limit, then a restricted child: WRITE_FILE handled with a rule on its folder may
write there but not /dev/null, and a scoped child may not signal its parent nor connect to an
abstract socket made outside its sandbox (EPERM), while an unrestricted one may. The expected
output is the native one on Linux 6.18 (ABI 7), on both arches; lsm_list_modules lists at
least the capability module (100) and Landlock (110), the ids the host lists too."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* include/uapi/linux/landlock.h, spelled out: the build host's headers may predate ABI 6 */
struct landlock_path_beneath_attr { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));
struct landlock_net_port_attr { uint64_t allowed_access; uint64_t port; };
#define LANDLOCK_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE (1ULL << 2)
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#define SYS_lsm_list_modules 461       /* the same number on i386 and x86-64 */

static long r(long v) { return v < 0 ? -errno : v; }
static long create(void *a, size_t s, unsigned f) { return r(syscall(SYS_landlock_create_ruleset, a, s, f)); }
static long add(int fd, int t, void *a, unsigned f) { return r(syscall(SYS_landlock_add_rule, fd, t, a, f)); }
static long restrict_self(int fd, unsigned f) { return r(syscall(SYS_landlock_restrict_self, fd, f)); }

static int scoped(unsigned long long scope) {
    unsigned long long attr[3] = {0, 0, scope};
    int fd = create(attr, sizeof attr, 0);
    return restrict_self(fd, 0);
}

static int child_status(void) { int st; wait(&st); return WEXITSTATUS(st); }

static void fs_rights(void) {
    char d1[] = "/tmp/llfs-XXXXXX", d2[] = "/tmp/llfs2-XXXXXX", p[64], q[64];
    mkdtemp(d1); mkdtemp(d2);
#define P(fmt, ...) (snprintf(p, sizeof p, fmt, __VA_ARGS__), p)
#define SAY(what, call) printf("fs: %s %ld\n", what, r(call))
#define Q(fmt, ...) (snprintf(q, sizeof q, fmt, __VA_ARGS__), q)
    close(open(P("%s/a", d1), O_CREAT | O_WRONLY, 0600));
    int b = open(P("%s/b", d2), O_CREAT | O_WRONLY, 0600);
    write(b, "hello", 5); close(b);
    unsigned long long handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
        (1ULL << 4) | (1ULL << 5) | (1ULL << 7) | (1ULL << 8) | (1ULL << 10) | (1ULL << 12) |
        (1ULL << 13) | (1ULL << 14);
    unsigned long long attr[3] = {handled, 0, 0};
    int rs = create(attr, sizeof attr, 0);
    struct landlock_path_beneath_attr pb = {.allowed_access = handled & ~((1ULL << 10) | (1ULL << 13)),
                                            .parent_fd = open(d1, O_PATH)};
    add(rs, 1, &pb, 0);
    if (fork() == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        restrict_self(rs, 0);
        /* one call per line: printf's arguments have no order of evaluation */
        SAY("mkdir", mkdir(P("%s/sub", d1), 0700));
        SAY("mkdir outside", mkdir(P("%s/sub", d2), 0700));
        SAY("mkdir existing", mkdir(P("%s/a", d1), 0700));
        SAY("create", open(P("%s/new", d1), O_CREAT | O_WRONLY, 0600) >= 0 ? 0 : -1);
        SAY("create outside", open(P("%s/new", d2), O_CREAT | O_WRONLY, 0600));
        SAY("O_TRUNC outside", open(P("%s/b", d2), O_WRONLY | O_TRUNC));
        SAY("truncate", truncate(P("%s/a", d1), 0));
        SAY("truncate outside", truncate(P("%s/b", d2), 0));
        SAY("symlink", symlink("x", P("%s/l", d1)));
        SAY("symlink outside", symlink("x", P("%s/l", d2)));
        SAY("mkfifo unallowed", mkfifo(P("%s/f", d1), 0600));
        SAY("rename within", rename(P("%s/a", d1), Q("%s/a2", d1)));
        SAY("rename out", rename(P("%s/a2", d1), Q("%s/a", d2)));
        SAY("rename in", rename(P("%s/b", d2), Q("%s/b", d1)));
        SAY("rename to a sub-folder", rename(P("%s/new", d1), Q("%s/sub/new", d1)));
        SAY("unlink", unlink(P("%s/new", d1)));
        SAY("unlink outside", unlink(P("%s/b", d2)));
        SAY("rmdir", rmdir(P("%s/sub", d1)));
        _exit(0);
    }
    child_status();
    int before = open(P("%s/b", d2), O_WRONLY);
    unsigned long long only_truncate[3] = {1ULL << 14, 0, 0};
    rs = create(only_truncate, sizeof only_truncate, 0);
    if (fork() == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        restrict_self(rs, 0);
        int after = open(P("%s/b", d2), O_WRONLY);
        SAY("ftruncate of a file opened restricted", ftruncate(after, 5));
        SAY("ftruncate of a file opened before", ftruncate(before, 5));
        SAY("O_TRUNC", open(P("%s/b", d2), O_WRONLY | O_TRUNC));
        _exit(0);
    }
    child_status();
    close(before);
    struct stat st;
    stat(P("%s/b", d2), &st);
    printf("fs: after: %s/new %ld, b's size %ld\n", "d2", r(access(P("%s/new", d2), F_OK)), (long)st.st_size);
    unlink(P("%s/a2", d1)); unlink(P("%s/l", d1)); unlink(P("%s/b", d2));
    rmdir(d1); rmdir(d2);
}

static void exec_rights(const char *self) {
    char folder[256];
    strcpy(folder, self);
    *strrchr(folder, '/') = 0;
    for (int granted = 0; granted <= 1; granted++) {
        unsigned long long attr[3] = {1ULL << 0, 0, 0};    /* LANDLOCK_ACCESS_FS_EXECUTE */
        int rs = create(attr, sizeof attr, 0);
        struct landlock_path_beneath_attr pb = {.allowed_access = 1, .parent_fd = open(folder, O_PATH)};
        if (granted)
            add(rs, 1, &pb, 0);
        if (fork() == 0) {
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            restrict_self(rs, 0);
            char *argv[] = {(char *)self, "exec-ok", NULL};
            execv(self, argv);
            printf("exec with the folder granted %d: %ld\n", granted, -(long)errno);
            _exit(0);
        }
        child_status();
        close(rs);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {
        printf("exec ran\n");
        return 0;
    }
    unsigned long long attr[3] = {0};
    char dir[] = "/tmp/landlock-XXXXXX", file[64];
    mkdtemp(dir);
    snprintf(file, sizeof file, "%s/f", dir);
    char big[4097] = {0};
    printf("version %ld errata %ld both %ld with size %ld\n", create(NULL, 0, 1), create(NULL, 0, 2),
           create(NULL, 0, 3), create(NULL, 1, 1));
    attr[0] = ~0ULL;
    printf("unknown access %ld\n", create(attr, 8, 0));
    attr[0] = 0;
    printf("small %ld big %ld null %ld empty %ld\n", create(attr, 7, 0), create(big, sizeof big, 0),
           create(NULL, 8, 0), create(attr, 24, 0));
    big[30] = 1;
    printf("non-zero tail %ld\n", create(big, 32, 0));
    attr[0] = LANDLOCK_ACCESS_FS_WRITE_FILE;
    attr[1] = LANDLOCK_ACCESS_NET_BIND_TCP;
    int rs = create(attr, 24, 0);
    printf("ruleset fd %s, cloexec %d\n", rs > 2 ? "ok" : "bad", fcntl(rs, F_GETFD));
    struct landlock_path_beneath_attr pb = {.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE,
                                            .parent_fd = open(dir, O_PATH)};
    struct landlock_net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_BIND_TCP, .port = 70000};
    int pipes[2]; pipe(pipes);
    printf("add: flags %ld type %ld badfd %ld notruleset %ld\n", add(rs, 1, &pb, 1), add(rs, 0, &pb, 0),
           add(-1, 1, &pb, 0), add(pipes[0], 1, &pb, 0));
    pb.parent_fd = pipes[0];
    printf("add: pipe parent %ld null %ld\n", add(rs, 1, &pb, 0), add(rs, 1, NULL, 0));
    pb.parent_fd = open(dir, O_PATH);
    pb.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE;
    printf("add: unhandled %ld port %ld\n", add(rs, 1, &pb, 0), add(rs, 2, &np, 0));
    pb.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE;
    np.port = 1234;
    printf("add: path %ld port %ld\n", add(rs, 1, &pb, 0), add(rs, 2, &np, 0));
    printf("restrict: flags %ld badfd %ld pipe %ld\n", restrict_self(rs, 8), restrict_self(-1, 0),
           restrict_self(pipes[0], 0));
    if (fork() == 0) {
        int i = 0;
        while (restrict_self(rs, 0) == 0) i++;
        printf("layers %d then %ld\n", i, restrict_self(rs, 0));
        _exit(0);
    }
    child_status();
    if (fork() == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        printf("restricted %ld\n", restrict_self(rs, 0));
        printf("write here %d, /dev/null %ld, read /dev/null %s\n",
               open(file, O_WRONLY | O_CREAT, 0600) >= 0, r(open("/dev/null", O_WRONLY)),
               open("/dev/null", O_RDONLY) >= 0 ? "ok" : "denied");
        if (fork() == 0) {
            printf("grandchild /dev/null %ld\n", r(open("/dev/null", O_RDWR)));
            _exit(0);
        }
        child_status();
        _exit(0);
    }
    child_status();
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    memcpy(un.sun_path, "\0ll-test", 8);
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + 8;
    int server = socket(AF_UNIX, SOCK_STREAM, 0);
    bind(server, (struct sockaddr *)&un, len);
    listen(server, 4);
    struct sockaddr_un dun = {.sun_family = AF_UNIX};
    memcpy(dun.sun_path, "\0ll-dgram", 9);
    socklen_t dlen = offsetof(struct sockaddr_un, sun_path) + 9;
    int dgram = socket(AF_UNIX, SOCK_DGRAM, 0);
    bind(dgram, (struct sockaddr *)&dun, dlen);
    pid_t parent = getpid();
    for (int scope = 0; scope <= 1; scope++) {
        if (fork() == 0) {
            if (scope)
                scoped(LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET);
            int c = socket(AF_UNIX, SOCK_STREAM, 0);
            printf("scoped %d: kill parent %ld, kill self %ld, connect %ld\n", scope,
                   r(kill(parent, 0)), r(kill(getpid(), 0)), r(connect(c, (struct sockaddr *)&un, len)));
            int d = socket(AF_UNIX, SOCK_DGRAM, 0);
            printf("scoped %d: sendto %ld\n", scope, r(sendto(d, "x", 1, 0, (struct sockaddr *)&dun, dlen)));
            _exit(0);
        }
        child_status();
    }
    fs_rights();
    char self[256] = {0};
    readlink("/proc/self/exe", self, sizeof self - 1);
    exec_rights(self);
    uint64_t ids[16]; uint32_t size = 0;
    long n = r(syscall(SYS_lsm_list_modules, ids, &size, 0));
    printf("lsm short %ld size %s flags %ld\n", n, size % 8 == 0 && size ? "ok" : "bad",
           r(syscall(SYS_lsm_list_modules, ids, &size, 1)));
    n = r(syscall(SYS_lsm_list_modules, ids, &size, 0));
    int cap = 0, ll = 0;
    for (long i = 0; i < n; i++) { cap |= ids[i] == 100; ll |= ids[i] == 110; }
    printf("lsm capability %d landlock %d\n", cap, ll);
    unlink(file);
    rmdir(dir);
    return 0;
}
"""
EXPECTED = b"""\
version 7 errata 7 both -22 with size -22
unknown access -22
small -22 big -7 null -14 empty -42
non-zero tail -7
ruleset fd ok, cloexec 1
add: flags -22 type -22 badfd -9 notruleset -77
add: pipe parent -77 null -14
add: unhandled -22 port -22
add: path 0 port 0
restrict: flags -22 badfd -9 pipe -77
layers 16 then -7
restricted 0
write here 1, /dev/null -13, read /dev/null ok
grandchild /dev/null -13
scoped 0: kill parent 0, kill self 0, connect 0
scoped 0: sendto 1
scoped 1: kill parent -1, kill self 0, connect -1
scoped 1: sendto -1
fs: mkdir 0
fs: mkdir outside -13
fs: mkdir existing -17
fs: create 0
fs: create outside -13
fs: O_TRUNC outside -13
fs: truncate 0
fs: truncate outside -13
fs: symlink 0
fs: symlink outside -13
fs: mkfifo unallowed -13
fs: rename within 0
fs: rename out -13
fs: rename in -13
fs: rename to a sub-folder -18
fs: unlink 0
fs: unlink outside -13
fs: rmdir 0
fs: ftruncate of a file opened restricted -13
fs: ftruncate of a file opened before 0
fs: O_TRUNC -13
fs: after: d2/new -2, b's size 5
exec with the folder granted 0: -13
exec ran
lsm short -7 size ok flags -22
lsm capability 1 landlock 1
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_landlock_calls_and_enforcement(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, "landlock", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
