"""syslog(SYSLOG_ACTION_READ) waits for a record (kernel/printk/printk.c syslog_print:
wait_event_interruptible), and the model's log never gets one: the call sleeps until a signal
ends it (EINTR from a handler without SA_RESTART), and SIZE_UNREAD is 0. Root holds CAP_SYSLOG
(issue 32, LTP syslog12 expected EINVAL for the invalid arguments where the model said EPERM).
Not compared natively: a host's log has records, so its READ returns at once."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>
static void on_alarm(int sig) {}
int main(void) {
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    char buf[64];
    alarm(1);
    int r = klogctl(2, buf, sizeof buf);
    printf("read: %d %s\n", r, r < 0 ? strerror(errno) : "");
    printf("unread: %d\n", klogctl(9, NULL, 0));
    return 0;
}
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_syslog_read_sleeps_until_a_signal(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, "syslog_read", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == "read: -1 Interrupted system call\nunread: 0\n", \
        result.describe()


LEVELS = r"""
#include <stdio.h>
#include <sys/klog.h>
static void show(const char *when) {
    char text[64] = "";
    FILE *f = fopen("/proc/sys/kernel/printk", "r");
    fgets(text, sizeof text, f);
    fclose(f);
    printf("%s: %s", when, text);
}
int main(void) {
    show("boot");
    klogctl(8, NULL, 3);
    show("level 3");
    klogctl(6, NULL, 0);
    show("off");
    klogctl(7, NULL, 0);
    show("on");
    FILE *f = fopen("/proc/sys/kernel/printk", "w");
    fputs("5 4 1 7", f);
    fclose(f);
    show("written");
    return 0;
}
"""


def test_console_levels_follow_syslog_and_the_sysctl(tmp_path_factory):
    """LTP syslog11 saves and restores /proc/sys/kernel/printk around its console actions."""
    program = build_static(tmp_path_factory, "syslog_levels", LEVELS)
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == ("boot: 7\t4\t1\t7\nlevel 3: 3\t4\t1\t7\noff: 1\t4\t1\t7\n"
                                      "on: 3\t4\t1\t7\nwritten: 5\t4\t1\t7\n"), result.describe()
