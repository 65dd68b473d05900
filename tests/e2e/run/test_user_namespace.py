"""User namespaces (issue 32: CONFIG_USER_NS was off and CLONE_NEWUSER EPERM; LTP's
tst_setup_netns writes /proc/self/setgroups, uid_map and gid_map). kernel/user_namespace.c:
the initial namespace maps every id (uid_map "0 0 4294967295", no parent: NS_GET_PARENT and
NS_GET_USERNS EPERM, its maps not writable); an unprivileged user's unshare(CLONE_NEWUSER)
sees its ids as the overflow id until it maps them, may map its own uid (once; another id or
a second write EPERM, a bad line EINVAL) and its own gid only after denying setgroups (which
cannot be allowed again), is then root inside (setuid(0) works, an unmapped id is EINVAL,
setgroups stays EPERM), holds no capability over the machine (sethostname EPERM) and cannot
see above its namespace; root maps a child's namespace to a range from outside, whose
parent and owner are the caller's, and the child, root there, may setgroups. A C program
built by the host's gcc (static; -m32 for i386), run natively for the reference (as root)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#define NS_GET_USERNS 0xb701
#define NS_GET_PARENT 0xb702
#define NS_GET_OWNER_UID 0xb704

static void show(const char *what, long r) { printf("%-44s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : ""); }
static unsigned long ino(const char *path) { struct stat st; if (stat(path, &st)) return 0; return st.st_ino; }
static unsigned long fino(int fd) { struct stat st; if (fstat(fd, &st)) return 0; return st.st_ino; }
static void cat(const char *path) {
    char text[256] = "";
    int fd = open(path, O_RDONLY);
    int n = read(fd, text, sizeof text - 1);
    close(fd);
    printf("%s: [%s]\n", strncmp(path, "/proc/self", 10) ? "its map" : path, n < 0 ? strerrorname_np(errno) : text);
}
static long put(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    long r = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return r;
}
static void ids(const char *who) {
    uid_t r, e, s; gid_t gr, ge, gs;
    getresuid(&r, &e, &s); getresgid(&gr, &ge, &gs);
    printf("%s: uid %u %u %u gid %u %u %u groups %d\n", who, r, e, s, gr, ge, gs, getgroups(0, NULL));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned long first = ino("/proc/self/ns/user");
    int initial = open("/proc/self/ns/user", O_RDONLY);
    show("NS_GET_PARENT of the initial", ioctl(initial, NS_GET_PARENT));
    show("NS_GET_USERNS of the initial", ioctl(initial, NS_GET_USERNS));
    cat("/proc/self/uid_map");
    cat("/proc/self/setgroups");
    show("write the initial uid_map", put("/proc/self/uid_map", "0 0 1"));
    setgroups(0, NULL);
    pid_t child = fork();
    if (child == 0) {
        /* an unprivileged user makes its own namespace and maps itself */
        setresgid(1000, 1000, 1000);
        setresuid(1000, 1000, 1000);
        prctl(PR_SET_DUMPABLE, 1);        /* its /proc files are its own again */
        show("unprivileged unshare(CLONE_NEWUSER)", unshare(CLONE_NEWUSER));
        printf("new namespace: %d\n", ino("/proc/self/ns/user") != first);
        ids("before the maps");
        cat("/proc/self/uid_map");
        show("gid_map before setgroups deny", put("/proc/self/gid_map", "0 1000 1"));
        show("uid_map of another id", put("/proc/self/uid_map", "0 0 1"));
        show("uid_map bad line", put("/proc/self/uid_map", "0 1000"));
        show("uid_map own id", put("/proc/self/uid_map", "0 1000 1"));
        show("uid_map again", put("/proc/self/uid_map", "0 1000 1"));
        show("setgroups deny", put("/proc/self/setgroups", "deny"));
        show("setgroups allow again", put("/proc/self/setgroups", "allow"));
        show("gid_map own id", put("/proc/self/gid_map", "0 1000 1"));
        cat("/proc/self/uid_map");
        cat("/proc/self/gid_map");
        cat("/proc/self/setgroups");
        ids("after the maps");
        show("setgroups denied", setgroups(0, NULL));
        show("setuid(0) inside", setuid(0));
        show("setuid(5) unmapped", setuid(5));
        int fd = open("/proc/self/ns/user", O_RDONLY);
        int parent = ioctl(fd, NS_GET_PARENT);
        show("NS_GET_PARENT above its own", parent);
        uid_t owner = 12345;
        show("NS_GET_OWNER_UID", ioctl(fd, NS_GET_OWNER_UID, &owner));
        printf("owner seen inside: %u\n", owner);
        show("sethostname (not the machine's)", sethostname("x", 1));
        _exit(0);
    }
    waitpid(child, NULL, 0);
    /* root's child in a new namespace: the parent writes its maps */
    int sync1[2], sync2[2];
    pipe(sync1); pipe(sync2);
    child = fork();
    if (child == 0) {
        char c;
        unshare(CLONE_NEWUSER);
        write(sync1[1], "x", 1);
        read(sync2[0], &c, 1);
        ids("root's child, mapped by its parent");
        show("setgroups in its namespace", setgroups(0, NULL));
        _exit(0);
    }
    char c, path[64];
    read(sync1[0], &c, 1);
    snprintf(path, sizeof path, "/proc/%d/uid_map", child);
    show("parent writes a range", put(path, "0 100000 65536"));
    snprintf(path, sizeof path, "/proc/%d/gid_map", child);
    show("parent writes the gid range", put(path, "0 100000 65536\n"));
    cat(path);
    snprintf(path, sizeof path, "/proc/%d/ns/user", child);
    int theirs = open(path, O_RDONLY);
    int up = ioctl(theirs, NS_GET_PARENT);
    printf("its parent is ours: %d\n", fino(up) == first);
    int owner_ns = ioctl(theirs, NS_GET_USERNS);
    printf("its owner is ours: %d\n", fino(owner_ns) == first);
    uid_t owner = 12345;
    ioctl(theirs, NS_GET_OWNER_UID, &owner);
    printf("owner: %u\n", owner);
    write(sync2[1], "x", 1);
    waitpid(child, NULL, 0);
    return 0;
}
"""
EXPECTED = """NS_GET_PARENT of the initial                 -1 EPERM
NS_GET_USERNS of the initial                 -1 EPERM
/proc/self/uid_map: [         0          0 4294967295
]
/proc/self/setgroups: [allow
]
write the initial uid_map                    -1 EPERM
unprivileged unshare(CLONE_NEWUSER)          0 
new namespace: 1
before the maps: uid 65534 65534 65534 gid 65534 65534 65534 groups 0
/proc/self/uid_map: []
gid_map before setgroups deny                -1 EPERM
uid_map of another id                        -1 EPERM
uid_map bad line                             -1 EINVAL
uid_map own id                               8 
uid_map again                                -1 EPERM
setgroups deny                               4 
setgroups allow again                        -1 EPERM
gid_map own id                               8 
/proc/self/uid_map: [         0       1000          1
]
/proc/self/gid_map: [         0       1000          1
]
/proc/self/setgroups: [deny
]
after the maps: uid 0 0 0 gid 0 0 0 groups 0
setgroups denied                             -1 EPERM
setuid(0) inside                             0 
setuid(5) unmapped                           -1 EINVAL
NS_GET_PARENT above its own                  -1 EPERM
NS_GET_OWNER_UID                             0 
owner seen inside: 0
sethostname (not the machine's)              -1 EPERM
parent writes a range                        14 
parent writes the gid range                  15 
its map: [         0     100000      65536
]
its parent is ours: 1
its owner is ours: 1
owner: 0
root's child, mapped by its parent: uid 65534 65534 65534 gid 65534 65534 65534 groups 0
setgroups in its namespace                   0 
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "user_ns", PROGRAM, arch=request.param)


def test_user_namespace_maps_ids_and_capabilities(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
