"""/proc/PID/comm and /proc/PID/task/TID (issue 32, LTP futex_wake02 could not open
/proc/PID/task/ and prctl05 /proc/self/task/TID/comm): the task folder lists each thread, and
each thread's comm and stat show its own name (prctl PR_SET_NAME) and state (S while it
waits on a condition variable); /proc/self/comm is the leader's name. Compared with the
native run (the pids left out), both arches (static, -pthread, -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile int started;

static void *sleeper(void *arg) {
    (void)arg;
    prctl(PR_SET_NAME, "sleeper");
    pthread_mutex_lock(&lock);
    started = 1;
    pthread_cond_wait(&never, &lock);
    return NULL;
}

static void cat(const char *path) {
    char text[512] = {0};
    FILE *f = fopen(path, "r");
    if (!f) { printf("%s: missing\n", path); return; }
    fgets(text, sizeof text, f);
    fclose(f);
    char *p = strchr(text, ' ');       /* drop the pid: it differs from the native run's */
    printf("%s", p && strstr(path, "stat") ? p + 1 : text);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    prctl(PR_SET_NAME, "leader");
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    while (!started) usleep(1000);
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
    usleep(100000);
    char path[128];
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while ((e = readdir(d)))
        if (atoi(e->d_name) > 0) n++;
    closedir(d);
    printf("tasks: %d\n", n);
    cat("/proc/self/comm");
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", getpid());
    cat(path);
    d = opendir("/proc/self/task");
    while ((e = readdir(d))) {
        if (atoi(e->d_name) > 0 && atoi(e->d_name) != getpid()) {
            snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
            cat(path);
            snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
            char text[512] = {0};
            FILE *f = fopen(path, "r");
            fgets(text, sizeof text, f);
            fclose(f);
            printf("its state: %c\n", *(strrchr(text, ')') + 2));
        }
    }
    closedir(d);
    return 0;
}
"""
EXPECTED = b"""\
tasks: 2
leader
leader
sleeper
its state: S
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "tasks", PROGRAM, ("-pthread",), arch=request.param)


def test_proc_task_lists_each_thread_with_its_name_and_state(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
