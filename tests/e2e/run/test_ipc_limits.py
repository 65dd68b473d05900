"""The IPC namespace's limits are writable sysctls the calls read (issue 32, LTP msgget03:
writing /proc/sys/kernel/msgmni was EACCES; shmget02 sets shmmax). ipc/ipc_sysctl.c: msgmni
and shmmni 0..IPCMNI, msgmax and msgmnb 0..INT_MAX, shmmax and shmall any unsigned long (shmall
in pages), sem's four ints with semmni checked after (ERANGE, semmni kept, the others written).
msgget is ENOSPC at msgmni queues (ipc_addid), a new queue's msg_qbytes is msgmnb (newque),
msgsnd past msgmax EINVAL, shmget past shmmax EINVAL and past shmall's pages ENOSPC (newseg),
semget past semmsl EINVAL, semop past semopm E2BIG; IPC_INFO reports them. EXPECTED is the
program's output on the reference host (Linux 6.x, x86-64 and -m32 alike) in a new IPC
namespace (`unshare -i`, so the host's own limits were not touched)."""
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
#include <unistd.h>

static int put(const char *name, const char *value) {
    char path[64];
    snprintf(path, sizeof path, "/proc/sys/kernel/%s", name);
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -errno;
    int r = write(fd, value, strlen(value)) < 0 ? -errno : 0;
    close(fd);
    return r;
}

static void get(const char *name) {
    char path[64], buf[128] = "";
    snprintf(path, sizeof path, "/proc/sys/kernel/%s", name);
    int fd = open(path, O_RDONLY);
    int n = read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("%s = %.*s", name, n > 0 ? n : 0, buf);
}

static void report(const char *what, long r) {
    if (r < 0)
        printf("%s: %s\n", what, strerror(errno));
    else
        printf("%s: ok\n", what);
}

static void set(const char *name, const char *value) {
    int r = put(name, value);
    printf("write %s %s: %s\n", name, value, r < 0 ? strerror(-r) : "ok");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    set("msgmni", "32769");
    set("msgmni", "-1");
    set("msgmni", "3");
    get("msgmni");
    int q[4];
    for (int i = 0; i < 4; i++) {
        q[i] = msgget(IPC_PRIVATE, 0600);
        report("msgget", q[i]);
    }
    set("msgmnb", "100");
    int q2 = -1;
    msgctl(q[0], IPC_RMID, NULL);
    q2 = msgget(IPC_PRIVATE, 0600);
    report("msgget after a removal", q2);
    struct msqid_ds ds;
    msgctl(q2, IPC_STAT, &ds);
    printf("qbytes %lu\n", (unsigned long)ds.msg_qbytes);
    set("msgmax", "16");
    struct { long type; char text[32]; } m = {1, "0123456789abcdef0"};
    report("msgsnd 16", msgsnd(q2, &m, 16, IPC_NOWAIT));
    report("msgsnd 17", msgsnd(q2, &m, 17, IPC_NOWAIT));
    struct msginfo info;
    msgctl(0, IPC_INFO, (struct msqid_ds *)&info);
    printf("msginfo max %d mnb %d mni %d\n", info.msgmax, info.msgmnb, info.msgmni);
    for (int i = 1; i < 3; i++)
        msgctl(q[i], IPC_RMID, NULL);
    msgctl(q2, IPC_RMID, NULL);

    set("shmmax", "-5");
    set("shmmax", "8192");
    get("shmmax");
    report("shmget 8192", shmctl(shmget(IPC_PRIVATE, 8192, 0600), IPC_RMID, NULL));
    report("shmget 8193", shmget(IPC_PRIVATE, 8193, 0600));
    set("shmall", "3");
    int s1 = shmget(IPC_PRIVATE, 8192, 0600);
    report("shmget 2 pages of 3", s1);
    report("shmget 2 more", shmget(IPC_PRIVATE, 4097, 0600));
    report("shmget 1 more", shmctl(shmget(IPC_PRIVATE, 4096, 0600), IPC_RMID, NULL));
    shmctl(s1, IPC_RMID, NULL);
    struct shminfo si;
    shmctl(0, IPC_INFO, (struct shmid_ds *)&si);
    printf("shminfo max %lu all %lu mni %lu seg %lu\n", (unsigned long)si.shmmax,
           (unsigned long)si.shmall, (unsigned long)si.shmmni, (unsigned long)si.shmseg);

    set("sem", "250 32000 32 40000");
    get("sem");
    set("sem", "250 32000 32 128");
    get("sem");
    report("semget 250", semctl(semget(IPC_PRIVATE, 250, 0600), 0, IPC_RMID));
    report("semget 251", semget(IPC_PRIVATE, 251, 0600));
    int id = semget(IPC_PRIVATE, 1, 0600);
    struct sembuf ops[33] = {{0}};
    report("semop 33", semop(id, ops, 33));
    semctl(id, 0, IPC_RMID);
    return 0;
}
"""
EXPECTED = b"""\
write msgmni 32769: Invalid argument
write msgmni -1: Invalid argument
write msgmni 3: ok
msgmni = 3
msgget: ok
msgget: ok
msgget: ok
msgget: No space left on device
write msgmnb 100: ok
msgget after a removal: ok
qbytes 100
write msgmax 16: ok
msgsnd 16: ok
msgsnd 17: Invalid argument
msginfo max 16 mnb 100 mni 3
write shmmax -5: Invalid argument
write shmmax 8192: ok
shmmax = 8192
shmget 8192: ok
shmget 8193: Invalid argument
write shmall 3: ok
shmget 2 pages of 3: ok
shmget 2 more: No space left on device
shmget 1 more: ok
shminfo max 8192 all 3 mni 4096 seg 4096
write sem 250 32000 32 40000: Numerical result out of range
sem = 250\t32000\t32\t32000
write sem 250 32000 32 128: ok
sem = 250\t32000\t32\t128
semget 250: ok
semget 251: Invalid argument
semop 33: Argument list too long
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_ipc_limits_are_written_and_enforced(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "ipc_limits", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
