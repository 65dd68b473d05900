"""dnotify: fcntl(F_NOTIFY) on a directory signals its owner (issue 32, LTP fcntl38 and fcntl39
were TCONF for CONFIG_DNOTIFY=n, then F_NOTIFY was EINVAL). fs/notify/dnotify/dnotify.c: the
events asked for (attrib, rename within the directory only, create and move in, delete and
move out, modify, access), the directory's own events and its children's, F_SETSIG's signal
with si_code POLL_MSG, si_band POLLIN|POLLRDNORM|POLLMSG and si_fd, one-shot unless
DN_MULTISHOT, removed by F_NOTIFY 0 and by closing the fd it was set through, ENOTDIR on a
file. Compared with the native run; built by the host's gcc (static; -m32 for i386)."""
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
#include <unistd.h>

static volatile int hits[64], code, band, other;

static void handler(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    if (sig != SIGRTMIN + 1 || si->si_fd < 0 || si->si_fd >= 64) { other++; return; }
    hits[si->si_fd]++;
    code = si->si_code;
    band = si->si_band;
}

static void watch(int fd, unsigned long events) {
    if (fcntl(fd, F_SETSIG, SIGRTMIN + 1) || fcntl(fd, F_NOTIFY, events))
        printf("F_NOTIFY failed: %s\n", strerrorname_np(errno));
}

static void show(const char *what, int a, int b) {
    printf("%-34s parent %d subdir %d other %d code %d band %#x\n", what, hits[a], hits[b],
           other, code, band);
    memset((void *)hits, 0, sizeof hits);
    code = band = other = 0;
}

int main(void) {
    char dir[] = "/tmp/dnXXXXXX";
    if (!mkdtemp(dir) || chdir(dir)) return 1;
    struct sigaction act = {0};
    act.sa_sigaction = handler;
    act.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN + 1, &act, NULL);
    mkdir("sub", 0700);
    close(open("file", O_CREAT | O_RDWR, 0600));
    int parent = open(".", O_RDONLY), sub = open("sub", O_RDONLY);
    /* one watch at a time: the model keeps one pending instance of a signal */
    watch(parent, DN_ATTRIB | DN_MULTISHOT);
    chmod("sub", 0755);
    show("chmod sub, parent watches (attrib)", parent, sub);
    chmod(".", 0755);
    show("chmod ., parent watches (attrib)", parent, sub);
    watch(parent, 0);
    watch(sub, DN_ATTRIB | DN_MULTISHOT);
    chmod("sub", 0700);
    show("chmod sub, sub watches (attrib)", parent, sub);
    watch(sub, 0);
    chmod("sub", 0755);
    show("after F_NOTIFY 0", parent, sub);
    watch(parent, DN_RENAME | DN_MULTISHOT);
    watch(sub, DN_RENAME | DN_MULTISHOT);
    rename("file", "sub/file");
    show("rename into sub (rename)", parent, sub);
    rename("sub/file", "sub/file2");
    show("rename within sub (rename)", parent, sub);
    rename("sub", "sub2");
    show("rename sub itself (rename)", parent, sub);
    rename("sub2", "sub");
    show("rename it back (rename)", parent, sub);
    watch(parent, 0);
    watch(sub, 0);
    watch(parent, DN_CREATE);
    close(open("a", O_CREAT | O_RDWR, 0600));
    show("create (create, oneshot)", parent, sub);
    close(open("b", O_CREAT | O_RDWR, 0600));
    show("second create (create, oneshot)", parent, sub);
    watch(parent, DN_DELETE | DN_MULTISHOT);
    watch(parent, DN_CREATE);
    unlink("a");
    rename("sub/file2", "c");
    show("unlink, move in (delete|create)", parent, sub);
    watch(parent, 0);
    watch(sub, DN_MODIFY | DN_ACCESS | DN_MULTISHOT);
    int f = open("sub/file", O_CREAT | O_RDWR, 0600);
    char buf[4];
    write(f, "x", 1);
    show("write in sub (modify|access)", parent, sub);
    pread(f, buf, 1, 0);
    show("read in sub (modify|access)", parent, sub);
    int dup_of_sub = dup(sub);
    close(sub);
    write(f, "x", 1);
    show("after closing the watch's fd", parent, dup_of_sub);
    close(f);
    if (fcntl(parent, F_NOTIFY, DN_CREATE) < 0 && errno == EBADF)
        printf("?\n");
    int reg = open("b", O_RDONLY);
    int r = fcntl(reg, F_NOTIFY, DN_CREATE);
    printf("F_NOTIFY on a file: %d %s\n", r, strerrorname_np(errno));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "dnotify", PROGRAM, arch=request.param)


def test_dnotify_signals_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"rename sub itself (rename)         parent 1 subdir 0" in native.stdout
    assert b"F_NOTIFY on a file: -1 ENOTDIR" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
