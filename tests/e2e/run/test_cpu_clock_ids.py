"""Other tasks' CPU clocks (issue 32, LTP nice05: clock_gettime of pthread_getcpuclockid's id was
EINVAL): the negative ids of kernel/time/posix-cpu-timers.c (~pid << 3, bit 2 for a thread)
name a thread of the caller's process or a process; a thread of another process, a task that
is gone, the fourth kind and a dynamic (fd) clock are EINVAL. Times differ between runs, so
the program prints whether each call succeeds (and getres' 1 ns). Compared with the native run
on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static pthread_barrier_t ready, done;
static pid_t thread_tid;

static void *spin(void *arg) {
    thread_tid = syscall(SYS_gettid);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
    return NULL;
}

static long read_clock(clockid_t id) {
    struct timespec ts;
    return clock_gettime(id, &ts);
}

#define THREAD_CLOCK(tid) ((clockid_t)((~(unsigned)(tid) << 3) | 4 | 2))
#define PROCESS_CLOCK(pid) ((clockid_t)((~(unsigned)(pid) << 3) | 2))

int main(void) {
    pthread_t thread;
    pthread_barrier_init(&ready, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    pthread_create(&thread, NULL, spin, NULL);
    pthread_barrier_wait(&ready);
    clockid_t id;
    result("pthread_getcpuclockid", -pthread_getcpuclockid(thread, &id));
    result("thread's clock", read_clock(id));
    struct timespec res;
    result("thread's clock getres", clock_getres(id, &res));
    printf("  resolution %ld %ld\n", (long)res.tv_sec, res.tv_nsec);
    result("thread clock by tid", read_clock(THREAD_CLOCK(thread_tid)));
    result("own thread clock", read_clock(THREAD_CLOCK(0)));
    result("clock_getcpuclockid self", -clock_getcpuclockid(getpid(), &id));
    result("own process clock", read_clock(id));
    result("process clock by tid", read_clock(PROCESS_CLOCK(thread_tid)));
    result("fourth kind", read_clock(THREAD_CLOCK(0) | 3));
    result("fd clock", read_clock((clockid_t)((~3u << 3) | 3)));
    pid_t child = fork();
    if (child == 0) { pause(); _exit(0); }
    result("child's process clock", read_clock(PROCESS_CLOCK(child)));
    result("child as a thread", read_clock(THREAD_CLOCK(child)));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    result("reaped child's clock", read_clock(PROCESS_CLOCK(child)));
    pthread_barrier_wait(&done);
    pthread_join(thread, NULL);
    result("joined thread's clock", read_clock(THREAD_CLOCK(thread_tid)));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "cpu_clock_ids", PROGRAM, ("-pthread",), arch=request.param)


def test_cpu_clock_ids_as_natively(program):
    compare_with_native(program, b"thread clock by tid        0", b"child as a thread          -1 EINVAL",
                        b"reaped child's clock       -1 EINVAL")
