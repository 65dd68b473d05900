"""fanotify (issue 32, LTP fanotify02, 04, 07, 08, 11 were ENOSYS: fanotify_init was not
modeled). fs/notify/fanotify/fanotify_user.c's checks of fanotify_init and fanotify_mark, the
path events of a marked file (open, modify, access, close; merged while queued), their
metadata (version 3, the causing pid, an fd open on the file with the group's flags and
O_LARGEFILE), EINVAL for a buffer too small, EAGAIN for nothing queued under FAN_NONBLOCK,
removing events from a mark, FAN_MARK_FLUSH, a folder's FAN_EVENT_ON_CHILD and FAN_ONDIR, the
ignored mask; permission events (a child's read waits for the listener's answer: EPERM when
denied, ENOENT and EINVAL for a bad response, allowed when the group closes). Compared with
the native run; built by the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/fanXXXXXX";
static char file[64], sub[64];

static void result(const char *what, long r) {
    const char *e = r < 0 ? strerrorname_np(errno) : "";
    printf("%-46s %ld %s\n", what, r < 0 ? -1L : r, e);
}

/* read what is queued and print each event: mask, whether the pid is ours, what the fd is */
static void events(int g, const char *what) {
    char buf[4096];
    printf("%s:\n", what);
    ssize_t n = read(g, buf, sizeof buf);
    if (n < 0) {
        printf("  read: %s\n", strerrorname_np(errno));
        return;
    }
    for (struct fanotify_event_metadata *m = (void *)buf; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
        char link[PATH_MAX] = "", proc[64];
        struct stat st;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", m->fd);
        ssize_t l = readlink(proc, link, sizeof link - 1);
        fstat(m->fd, &st);
        int flags = fcntl(m->fd, F_GETFL);
        printf("  mask %#llx vers %d len %d pid-ours %d fd-is %s type %o flags %#o\n",
               (unsigned long long)m->mask, m->vers, m->event_len, m->pid == getpid(),
               l < 0 ? "?" : strcmp(link, file) == 0 ? "file" : strcmp(link, dir) == 0 ? "dir" : "other",
               st.st_mode & S_IFMT, flags & ~O_LARGEFILE);
        close(m->fd);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!mkdtemp(dir)) return 1;
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    close(open(file, O_CREAT | O_RDWR, 0644));
    mkdir(sub, 0755);
    char buf[16];

    result("init: unknown flag", fanotify_init(0x80000000, O_RDONLY));
    result("init: O_ACCMODE event flags", fanotify_init(FAN_CLASS_NOTIF, O_ACCMODE));
    result("init: both classes", fanotify_init(FAN_CLASS_CONTENT | FAN_CLASS_PRE_CONTENT, O_RDONLY));
    int g = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK, O_RDONLY);
    printf("group flags %#o\n", fcntl(g, F_GETFL) & ~O_LARGEFILE);
    result("mark: no event", fanotify_mark(g, FAN_MARK_ADD, 0, AT_FDCWD, file));
    result("mark: bits above 32", fanotify_mark(g, FAN_MARK_ADD, 1ULL << 40, AT_FDCWD, file));
    result("mark: add and remove", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, file));
    result("mark: permission on a NOTIF group", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, file));
    result("mark: create without fid reporting", fanotify_mark(g, FAN_MARK_ADD, FAN_CREATE, AT_FDCWD, dir));
    result("mark: a closed fd", fanotify_mark(99, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, file));
    int plain = open(file, O_RDONLY);
    result("mark: not a fanotify fd", fanotify_mark(plain, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, file));
    close(plain);
    result("mark: ONLYDIR on a file", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_ONLYDIR, FAN_OPEN, AT_FDCWD, file));
    result("mark: no such file", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, "/tmp/nothing/here"));
    result("mark: remove from no mark", fanotify_mark(g, FAN_MARK_REMOVE, FAN_OPEN, AT_FDCWD, file));
    result("mark: flush with another flag", fanotify_mark(g, FAN_MARK_FLUSH | FAN_MARK_ONLYDIR, 0, AT_FDCWD, dir));
    events(g, "nothing queued");

    result("mark the file", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN | FAN_CLOSE | FAN_MODIFY | FAN_ACCESS, AT_FDCWD, file));
    int fd = open(file, O_RDWR);
    write(fd, "abc", 3);
    write(fd, "def", 3);
    pread(fd, buf, 3, 0);
    close(fd);
    events(g, "open, two writes, a read, close (merged)");
    fd = open(file, O_RDONLY);
    char small[8];
    result("read into 8 bytes", read(g, small, sizeof small));
    close(fd);
    events(g, "the open, then the close");
    result("remove open and close", fanotify_mark(g, FAN_MARK_REMOVE, FAN_OPEN | FAN_CLOSE, AT_FDCWD, file));
    fd = open(file, O_RDONLY);
    read(fd, buf, 1);
    close(fd);
    events(g, "a read only is left");
    result("flush", fanotify_mark(g, FAN_MARK_FLUSH, 0, AT_FDCWD, file));
    fd = open(file, O_RDONLY);
    close(fd);
    events(g, "after the flush");

    result("mark the folder, on child", fanotify_mark(g, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD, dir));
    close(open(file, O_RDONLY));
    close(open(dir, O_RDONLY));
    close(open(sub, O_RDONLY));
    events(g, "a child opened, the folder, a subfolder (no ONDIR)");
    result("add FAN_ONDIR", fanotify_mark(g, FAN_MARK_ADD, FAN_ONDIR, AT_FDCWD, dir));
    close(open(dir, O_RDONLY));
    close(open(sub, O_RDONLY));
    events(g, "the folder, a subfolder (ONDIR)");
    result("ignore opens of the file", fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK, FAN_OPEN, AT_FDCWD, file));
    close(open(file, O_RDONLY));
    events(g, "the file opened, ignored");
    close(g);

    /* permission events: a child's read waits for the answer */
    int p = fanotify_init(FAN_CLASS_CONTENT, O_RDONLY);
    result("content group: mark access permission", fanotify_mark(p, FAN_MARK_ADD, FAN_ACCESS_PERM, AT_FDCWD, file));
    for (int answer = FAN_DENY; answer <= FAN_DENY + 1; answer++) {
        pid_t child = fork();
        if (child == 0) {
            close(p);                      /* else the group lives on in the child */
            int f = open(file, O_RDONLY);
            long r = read(f, buf, 3);
            result("  the child's read", r);
            _exit(0);
        }
        struct fanotify_event_metadata m;
        result("listener's read", read(p, &m, sizeof m));
        printf("  mask %#llx pid-is-child %d\n", (unsigned long long)m.mask, m.pid == child);
        struct fanotify_response bad = {m.fd + 100, FAN_ALLOW};
        result("  answer for another fd", write(p, &bad, sizeof bad));
        bad.fd = m.fd;
        bad.response = 7;
        result("  a bad answer", write(p, &bad, sizeof bad));
        struct fanotify_response resp = {m.fd, answer == FAN_DENY ? FAN_DENY : FAN_ALLOW};
        long answered = write(p, &resp, sizeof resp);
        waitpid(child, NULL, 0);
        result(answer == FAN_DENY ? "  deny" : "  allow", answered);
        close(m.fd);
    }
    pid_t child = fork();
    if (child == 0) {
        close(p);
        int f = open(file, O_RDONLY);
        long r = read(f, buf, 3);
        result("  the child's read once the group closed", r);
        _exit(0);
    }
    struct fanotify_event_metadata m;
    read(p, &m, sizeof m);
    close(m.fd);
    close(p);
    waitpid(child, NULL, 0);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "fanotify", PROGRAM, arch=request.param)


def test_fanotify_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"  the child's read                             -1 EPERM" in native.stdout
    assert b"fd-is dir type 40000" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
