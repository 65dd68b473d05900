"""Writable limits the model enforces (issue 32, LTP inotify06 and keyctl02: writing
/proc/sys/fs/inotify/max_user_instances and /proc/sys/kernel/keys/root_maxkeys was EACCES, so
their set-up broke). fs/notify/inotify/inotify_user.c: max_user_instances and
max_queued_events are proc_dointvec_minmax from 0; inotify_init past the instances is EMFILE,
and an instance's queue is max_queued_events as it was when the instance was made
(inotify_new_group), past which one IN_Q_OVERFLOW (wd -1) is queued. security/keys/sysctl.c:
the key quotas from 1 to INT_MAX; root's keys past root_maxkeys are EDQUOT (key_alloc; the
process keyring add_key makes is one of them). Run in the sandbox only: natively these limits
are the whole host's."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <sys/syscall.h>

static int put(const char *path, const char *value) {
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -errno;
    int r = write(fd, value, strlen(value)) < 0 ? -errno : 0;
    close(fd);
    return r;
}

static void set(const char *path, const char *value) {
    int r = put(path, value);
    printf("write %s %s: %s\n", path, value, r < 0 ? strerror(-r) : "ok");
}

static void get(const char *path) {
    char buf[64] = "";
    int fd = open(path, O_RDONLY);
    int n = read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("%s = %.*s", path, n > 0 ? n : 0, buf);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    set("/proc/sys/fs/inotify/max_user_instances", "-1");
    set("/proc/sys/fs/inotify/max_user_instances", "2");
    get("/proc/sys/fs/inotify/max_user_instances");
    int a = inotify_init1(0), b = inotify_init1(0), c = inotify_init1(0);
    printf("third instance: %s\n", c < 0 ? strerror(errno) : "ok");
    close(b);
    b = inotify_init1(0);
    printf("after a close: %s\n", b < 0 ? strerror(errno) : "ok");
    close(a), close(b);
    set("/proc/sys/fs/inotify/max_user_instances", "128");
    set("/proc/sys/fs/inotify/max_queued_events", "2");
    int q = inotify_init1(IN_NONBLOCK);
    set("/proc/sys/fs/inotify/max_queued_events", "16384");
    inotify_add_watch(q, ".", IN_CREATE);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        close(open(name, O_CREAT | O_WRONLY, 0600));
        unlink(name);
    }
    char events[4096];
    int n = read(q, events, sizeof events), at = 0, count = 0;
    while (at < n) {
        struct inotify_event *e = (struct inotify_event *)(events + at);
        printf("event wd %d mask %#x\n", e->wd, e->mask);
        at += sizeof *e + e->len;
        count++;
    }
    close(q);
    get("/proc/sys/kernel/keys/root_maxkeys");
    set("/proc/sys/kernel/keys/root_maxkeys", "0");
    set("/proc/sys/kernel/keys/root_maxkeys", "5");
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "key%d", i);
        long k = syscall(SYS_add_key, "user", name, "x", 1, -2 /* KEY_SPEC_PROCESS_KEYRING */);
        printf("add_key %s: %s\n", name, k < 0 ? strerror(errno) : "ok");
    }
    return 0;
}
"""
EXPECTED = b"""\
write /proc/sys/fs/inotify/max_user_instances -1: Invalid argument
write /proc/sys/fs/inotify/max_user_instances 2: ok
/proc/sys/fs/inotify/max_user_instances = 2
third instance: Too many open files
after a close: ok
write /proc/sys/fs/inotify/max_user_instances 128: ok
write /proc/sys/fs/inotify/max_queued_events 2: ok
write /proc/sys/fs/inotify/max_queued_events 16384: ok
event wd 1 mask 0x100
event wd 1 mask 0x100
event wd -1 mask 0x4000
/proc/sys/kernel/keys/root_maxkeys = 1000000
write /proc/sys/kernel/keys/root_maxkeys 0: Invalid argument
write /proc/sys/kernel/keys/root_maxkeys 5: ok
add_key key0: ok
add_key key1: ok
add_key key2: ok
add_key key3: ok
add_key key4: Disk quota exceeded
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_inotify_and_key_limits_are_written_and_enforced(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "tunables_enforced", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
