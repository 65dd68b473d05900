"""/proc/self/status's ids, umask, groups, thread count and effective capabilities follow the
process (issue 32: LTP geteuid02, getegid01, getuid03 read Uid:/Gid: there; the sandbox
printed fixed root ids, umask 0022, no groups and one thread). After setgroups, setresgid,
setresuid and umask, and with a second thread, the lines are the native ones (the capability
sets are compared only as empty or not: the reference host's container lacks some). Built by
the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void *idle(void *unused) {
    for (;;)                    /* setresuid's SIGSETXID ends a pause(): pause again, so that
                                   the thread is there whenever the host or the sandbox's
                                   scheduler lets main go on (it ends with the process) */
        pause();
    return NULL;
}

static void show(void) {
    static const char *shown[] = {"Umask:", "Uid:", "Gid:", "Groups:", "Threads:", NULL};
    char line[512];
    FILE *status = fopen("/proc/self/status", "r");
    while (fgets(line, sizeof line, status)) {
        for (int i = 0; shown[i]; i++)
            if (!strncmp(line, shown[i], strlen(shown[i])))
                fputs(line, stdout);
        if (!strncmp(line, "CapEff:", 7))
            printf("CapEff empty: %d\n", !strcmp(line + 7, "\t0000000000000000\n"));
    }
    fclose(status);
}

int main(void) {
    show();
    umask(027);
    gid_t groups[] = {4, 24};
    setgroups(2, groups);
    pthread_t thread;
    pthread_create(&thread, NULL, idle, NULL);
    show();                     /* two threads */
    setresgid(100, 200, 300);
    setresuid(1000, 2000, 0);
    show();
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "proc_status", PROGRAM, flags=("-pthread",),
                        arch=request.param)


def test_status_follows_the_process(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"Threads:\t2\n" in native.stdout and b"Uid:\t1000\t2000\t0\t2000\n" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
