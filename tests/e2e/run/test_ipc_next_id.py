"""/proc/sys/kernel/{msg,sem,shm}_next_id (issue 32, LTP msgget04/05, shmget05/06: the files
did not exist, and CONFIG_CHECKPOINT_RESTORE is in the modeled kernel's configuration): root
writes the id the next object of the kind gets (ipc/util.c ipc_idr_alloc: its seq, the lowest
free index from its own), the value reads -1 again once an object is made, and a negative or
unparsable value is EINVAL (proc_dointvec_minmax, 0..INT_MAX). Compared with the native run of
the same program in a new IPC namespace (unshare --ipc: the host's ids stay untouched). Built
by the host's gcc (static; -m32 for i386)."""
import subprocess

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
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *kind, const char *value) {
    char path[64];
    snprintf(path, sizeof path, "/proc/sys/kernel/%s_next_id", kind);
    int fd = open(path, O_WRONLY);
    long r = fd < 0 ? -1 : write(fd, value, strlen(value));
    printf("write %s %s: %ld %s\n", kind, value, r, r < 0 ? strerrorname_np(errno) : "");
    if (fd >= 0)
        close(fd);
}

static void show(const char *kind) {
    char path[64], text[32] = {0};
    snprintf(path, sizeof path, "/proc/sys/kernel/%s_next_id", kind);
    int fd = open(path, O_RDONLY);
    read(fd, text, sizeof text - 1);
    close(fd);
    struct stat st;
    stat(path, &st);
    printf("%s_next_id %o: %s", kind, st.st_mode & 07777, text);
}

int main(void) {
    show("msg"); show("sem"); show("shm");
    put("msg", "1234");
    show("msg");
    int q1 = msgget(IPC_PRIVATE, 0600);
    printf("queue %d\n", q1);
    show("msg");
    int q2 = msgget(IPC_PRIVATE, 0600);
    printf("next queue is not 1234: %d\n", q2 != 1234);
    put("msg", "1234");                           /* in use: the next free index above */
    int q3 = msgget(IPC_PRIVATE, 0600);
    printf("queue %d\n", q3);
    put("msg", "98309");                          /* seq 3, index 5 */
    int q4 = msgget(IPC_PRIVATE, 0600);
    printf("queue %d\n", q4);
    put("msg", "-3");
    put("msg", "abc");
    show("msg");
    put("sem", "77");
    int s = semget(IPC_PRIVATE, 1, 0600);
    printf("semaphores %d\n", s);
    put("shm", "4321");
    int m = shmget(IPC_PRIVATE, 4096, 0600);
    printf("segment %d\n", m);
    show("sem"); show("shm");
    msgctl(q1, IPC_RMID, NULL); msgctl(q2, IPC_RMID, NULL); msgctl(q3, IPC_RMID, NULL);
    msgctl(q4, IPC_RMID, NULL); semctl(s, 0, IPC_RMID); shmctl(m, IPC_RMID, NULL);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "next_id", PROGRAM, arch=request.param)


def test_next_ids_as_natively(program):
    native = subprocess.run(["unshare", "--ipc", str(program)], capture_output=True, check=True,
                            timeout=60)
    assert b"queue 98309\n" in native.stdout and b"segment 4321\n" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
