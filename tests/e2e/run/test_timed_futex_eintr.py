"""A futex wait a SA_RESTART handler's signal interrupts: under a timeout futex_wait returns
-ERESTART_RESTARTBLOCK (kernel/futex/waitwake.c, restarted by futex_wait_restart only when no
handler runs), which handle_signal turns into EINTR whatever SA_RESTART says; a wait for ever
returns -ERESTARTSYS and is made again. Before, the sandbox made the timed wait again too (it
then failed with EAGAIN once the second alarm's handler had changed the word). The program is
byte-identical with its native run on both arches."""
import pytest

from tests.e2e.static_c import build_static, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* A futex wait a SA_RESTART handler interrupts: with a timeout it fails with EINTR
 * (futex_wait's -ERESTART_RESTARTBLOCK is EINTR for a handler, SA_RESTART or not); for ever
 * it is made again (-ERESTARTSYS) and ends when the second alarm's handler wakes it. */
static int word;
static int alarms;
static void on_alarm(int sig)
{
    (void)sig;
    if (++alarms == 2) {
        word = 1;
        syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 100000}, {0, 100000}};
    setitimer(ITIMER_REAL, &every, NULL);
    struct timespec ts = {5, 0};
    long r = syscall(SYS_futex, &word, FUTEX_WAIT, 0, &ts, NULL, 0);
    printf("timed futex wait %ld %s\n", r, r < 0 ? strerrorname_np(errno) : "");
    r = syscall(SYS_futex, &word, FUTEX_WAIT, 0, NULL, NULL, 0);
    printf("futex wait for ever %ld %s alarms %d\n", r, r < 0 ? strerrorname_np(errno) : "",
           alarms);
    return 0;
}
"""


@pytest.mark.parametrize("arch", ("x86_64", "i386"))
def test_a_timed_futex_wait_fails_with_eintr_under_sa_restart(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"timed_futex_{arch}", SOURCE, arch=arch)
    compare_with_native(program, b"timed futex wait -1 EINTR\n",
                        b"futex wait for ever -1 EAGAIN alarms 2\n")
