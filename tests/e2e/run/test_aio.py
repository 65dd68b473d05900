"""Native AIO (issue 32, LTP io_setup02, io_destroy02, io_submit02 and io_submit04 were TCONF:
CONFIG_AIO unset, the calls ENOSYS): a C program built by the host's gcc (static; -m32 for
i386) is compared with its native run. io_setup's checks (EFAULT, EINVAL, EAGAIN past
fs.aio-max-nr, which fs.aio-nr counts), the ring Linux maps at the context's address (struct
aio_ring's header, "/[aio] (deleted)" shared in /proc/self/maps, head and tail moving as events
are reaped); io_submit of PWRITE, PREAD, PWRITEV, PREADV, FSYNC, FDSYNC and POLL with their
events (data, obj, res), aio_key cleared, the submission errors in Linux's order (EINVAL for a
size on fsync, an unknown opcode, reserved2, a negative offset; EBADF; EOPNOTSUPP for an
unknown RWF flag; a batch stopping at its first bad iocb), IOCB_FLAG_RESFD signalling an
eventfd (EINVAL, EBADF for others), RWF_NOWAIT on an empty pipe completing with -EAGAIN;
io_getevents' checks, its timeout and min_nr, its sleep ended by a forked writer waking a
pending poll and by a signal (EINTR whatever SA_RESTART says); io_cancel of a waiting poll
(EINPROGRESS, its event delivered; EINVAL after, or with a bad key); io_destroy unmapping the
ring, EINVAL after."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int alarms;
static void on_alarm(int sig) { alarms++; }
struct ring { unsigned id, nr, head, tail, magic, compat, incompat, header; struct io_event ev[]; };

static void result(const char *what, long r) {
    printf("%-28s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "");
}
static long setup(unsigned n, aio_context_t *c) { return syscall(__NR_io_setup, n, c); }
static long submit(aio_context_t c, long n, struct iocb **v) { return syscall(__NR_io_submit, c, n, v); }
static long getev(aio_context_t c, long mn, long n, struct io_event *e, struct timespec *t) {
    return syscall(__NR_io_getevents, c, mn, n, e, t);
}
static void prep(struct iocb *cb, int op, int fd, void *buf, unsigned long n, long long off) {
    memset(cb, 0, sizeof(*cb));
    cb->aio_lio_opcode = op; cb->aio_fildes = fd; cb->aio_buf = (uintptr_t)buf;
    cb->aio_nbytes = n; cb->aio_offset = off; cb->aio_data = 0x1000 + op;
}
static void one_event(aio_context_t c, struct iocb *cb, const char *what) {
    struct io_event e;
    struct timespec t = {1, 0};
    long r = getev(c, 1, 1, &e, &t);
    printf("%-28s %ld data=%llx obj=%s res=%lld\n", what, r, (unsigned long long)e.data,
           e.obj == (uintptr_t)cb ? "iocb" : "other", (long long)e.res);
}
static long aio_nr(void) {
    long v = -1;
    FILE *f = fopen("/proc/sys/fs/aio-nr", "r");
    if (f) { fscanf(f, "%ld", &v); fclose(f); }
    return v;
}
static void maps(aio_context_t c) {
    char line[512], want[32];
    snprintf(want, sizeof want, "%lx-", (unsigned long)c);
    FILE *f = fopen("/proc/self/maps", "r");
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, want, strlen(want))) {
            char perms[8], name[256] = "";
            sscanf(line, "%*s %7s %*s %*s %*s %255[^\n]", perms, name);
            printf("maps: %s %s\n", perms, name);
            found = 1;
        }
    if (!found) printf("maps: no ring\n");
    fclose(f);
}

int main(void) {
    aio_context_t c = 0, bad = 1;
    long before = aio_nr();
    result("setup NULL", setup(1, NULL));
    result("setup ctx not 0", setup(1, &bad));
    result("setup 0 events", setup(0, &c));
    result("setup -1 events", setup(-1, &c));
    result("setup past aio-max-nr", setup(65537, &c));
    result("setup", setup(10, &c));
    printf("aio-nr grew by %ld\n", aio_nr() - before);
    struct ring *ring = (struct ring *)c;
    printf("ring: id=%u nr>=20:%d head=%u tail=%u magic=%x compat=%u incompat=%u header=%u\n",
           ring->id, ring->nr >= 20, ring->head, ring->tail, ring->magic, ring->compat,
           ring->incompat, ring->header);
    maps(c);

    int fd = open("aio.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);
    char out[16] = "hello, aio", in[16] = {0};
    struct iocb cb, cb2, *v[2] = {&cb, &cb2};
    prep(&cb, IOCB_CMD_PWRITE, fd, out, 10, 3);
    cb.aio_key = 77;
    result("submit pwrite", submit(c, 1, v));
    printf("aio_key after submit %u\n", cb.aio_key);
    one_event(c, &cb, "pwrite event");
    prep(&cb, IOCB_CMD_PREAD, fd, in, 16, 3);
    result("submit pread", submit(c, 1, v));
    one_event(c, &cb, "pread event");
    printf("read back \"%s\" ring head=%u tail=%u\n", in, ring->head, ring->tail);

    char a[4] = "AB", b[8] = "cdefg";
    struct iovec iov[2] = {{a, 2}, {b, 5}};
    prep(&cb, IOCB_CMD_PWRITEV, fd, iov, 2, 0);
    result("submit pwritev", submit(c, 1, v));
    one_event(c, &cb, "pwritev event");
    memset(a, 0, 4); memset(b, 0, 8);
    prep(&cb, IOCB_CMD_PREADV, fd, iov, 2, 1);
    result("submit preadv", submit(c, 1, v));
    one_event(c, &cb, "preadv event");
    printf("preadv got %.2s|%.5s\n", a, b);

    prep(&cb, IOCB_CMD_FSYNC, fd, NULL, 0, 0);
    prep(&cb2, IOCB_CMD_FDSYNC, fd, NULL, 0, 0);
    result("submit fsync+fdatasync", submit(c, 2, v));
    struct io_event ev[4];
    struct timespec zero = {0, 0}, tenth = {0, 100000000};
    result("getevents min 3 of 4, 0.1 s", getev(c, 3, 4, ev, &tenth));
    int first = ev[0].data > ev[1].data;      /* the two complete in either order natively */
    printf("events: res=%lld,%lld data=%llx,%llx\n", (long long)ev[first].res,
           (long long)ev[!first].res, (unsigned long long)ev[first].data,
           (unsigned long long)ev[!first].data);
    result("getevents none, no wait", getev(c, 0, 4, ev, &zero));
    result("getevents min > nr", getev(c, 2, 1, ev, &zero));
    result("getevents min < 0", getev(c, -1, 1, ev, &zero));
    result("getevents bad ctx", getev(bad, 0, 1, ev, &zero));

    prep(&cb, IOCB_CMD_FSYNC, fd, NULL, 1, 0);
    result("fsync with a size", submit(c, 1, v));
    prep(&cb, 99, fd, in, 1, 0);
    result("unknown opcode", submit(c, 1, v));
    prep(&cb, IOCB_CMD_PREAD, fd, in, 1, 0);
    cb.aio_reserved2 = 1;
    result("reserved2 set", submit(c, 1, v));
    prep(&cb, IOCB_CMD_PREAD, 99, in, 1, 0);
    result("bad fd", submit(c, 1, v));
    prep(&cb, IOCB_CMD_PREAD, fd, in, 1, -1);
    result("negative offset", submit(c, 1, v));
    prep(&cb, IOCB_CMD_PREAD, fd, in, 1, 0);
    cb.aio_rw_flags = 0x10000;
    result("unknown rw flag", submit(c, 1, v));
    int wr = open("aio.tmp", O_WRONLY);
    prep(&cb, IOCB_CMD_PREAD, wr, in, 1, 0);
    result("pread of write-only fd", submit(c, 1, v));
    prep(&cb, IOCB_CMD_PREAD, fd, in, 1, 0);
    prep(&cb2, IOCB_CMD_PREAD, 99, in, 1, 0);
    result("second iocb bad", submit(c, 2, v));
    one_event(c, &cb, "the first's event");
    result("submit negative nr", submit(c, -1, v));
    result("submit bad ctx", submit(bad, 1, v));
    result("submit nr 0", submit(c, 0, v));

    int efd = eventfd(0, 0);
    prep(&cb, IOCB_CMD_PREAD, fd, in, 4, 0);
    cb.aio_flags = IOCB_FLAG_RESFD; cb.aio_resfd = efd;
    result("submit with resfd", submit(c, 1, v));
    uint64_t count = 0;
    read(efd, &count, 8);
    printf("eventfd count %llu\n", (unsigned long long)count);
    one_event(c, &cb, "resfd event");
    cb.aio_resfd = fd;
    result("resfd not an eventfd", submit(c, 1, v));
    cb.aio_resfd = 99;
    result("resfd closed", submit(c, 1, v));

    int p[2];
    pipe(p);
    prep(&cb, IOCB_CMD_PREAD, p[0], in, 4, 0);
    cb.aio_rw_flags = RWF_NOWAIT;
    result("pipe read RWF_NOWAIT", submit(c, 1, v));
    one_event(c, &cb, "nowait event");
    prep(&cb, IOCB_CMD_FSYNC, p[0], NULL, 0, 0);
    result("fsync of a pipe", submit(c, 1, v));

    prep(&cb, IOCB_CMD_POLL, p[0], NULL, 0, 0);
    cb.aio_buf = POLLIN;
    result("poll empty pipe", submit(c, 1, v));
    result("getevents, poll waits", getev(c, 1, 1, ev, &zero));
    struct io_event dummy;
    result("cancel the poll", syscall(__NR_io_cancel, c, &cb, &dummy));
    one_event(c, &cb, "cancelled poll event");
    result("cancel it again", syscall(__NR_io_cancel, c, &cb, &dummy));
    cb.aio_key = 5;
    result("cancel with a bad key", syscall(__NR_io_cancel, c, &cb, &dummy));
    prep(&cb, IOCB_CMD_POLL, p[0], NULL, 0, 0);
    cb.aio_buf = POLLIN;
    result("poll empty pipe again", submit(c, 1, v));
    pid_t child = fork();
    if (!child) { usleep(50000); write(p[1], "x", 1); _exit(0); }
    one_event(c, &cb, "poll event after a write");
    waitpid(child, NULL, 0);
    prep(&cb, IOCB_CMD_POLL, p[0], NULL, 0, 0);
    cb.aio_buf = POLLIN;
    result("poll pipe with data", submit(c, 1, v));
    one_event(c, &cb, "ready poll event");
    prep(&cb, IOCB_CMD_POLL, p[0], NULL, 1, 0);
    result("poll with a size", submit(c, 1, v));

    struct sigaction sa = {0};
    sa.sa_handler = on_alarm; sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &it, NULL);
    result("getevents, SA_RESTART alarm", getev(c, 1, 1, ev, NULL));
    printf("alarms %d\n", alarms);

    result("destroy", syscall(__NR_io_destroy, c));
    maps(c);
    printf("aio-nr back by %ld\n", aio_nr() - before);
    result("destroy again", syscall(__NR_io_destroy, c));
    result("submit after destroy", submit(c, 1, v));
    aio_context_t c2 = 0;
    result("setup again", setup(1, &c2));
    printf("second ring id %u\n", ((struct ring *)c2)->id);
    unlink("aio.tmp");
    return 0;
}
"""

EXPECTED = """\
setup NULL                   -1 EFAULT
setup ctx not 0              -1 EINVAL
setup 0 events               -1 EINVAL
setup -1 events              -1 EINVAL
setup past aio-max-nr        -1 EAGAIN
setup                        0 
aio-nr grew by 10
ring: id=0 nr>=20:1 head=0 tail=0 magic=a10a10a1 compat=1 incompat=0 header=32
maps: rw-s /[aio] (deleted)
submit pwrite                1 
aio_key after submit 0
pwrite event                 1 data=1001 obj=iocb res=10
submit pread                 1 
pread event                  1 data=1000 obj=iocb res=10
read back "hello, aio" ring head=2 tail=2
submit pwritev               1 
pwritev event                1 data=1008 obj=iocb res=7
submit preadv                1 
preadv event                 1 data=1007 obj=iocb res=7
preadv got Bc|defgo
submit fsync+fdatasync       2 
getevents min 3 of 4, 0.1 s  2 
events: res=0,0 data=1002,1003
getevents none, no wait      0 
getevents min > nr           -1 EINVAL
getevents min < 0            -1 EINVAL
getevents bad ctx            -1 EINVAL
fsync with a size            -1 EINVAL
unknown opcode               -1 EINVAL
reserved2 set                -1 EINVAL
bad fd                       -1 EBADF
negative offset              -1 EINVAL
unknown rw flag              -1 EOPNOTSUPP
pread of write-only fd       -1 EBADF
second iocb bad              1 
the first's event            1 data=1000 obj=iocb res=1
submit negative nr           -1 EINVAL
submit bad ctx               -1 EINVAL
submit nr 0                  0 
submit with resfd            1 
eventfd count 1
resfd event                  1 data=1000 obj=iocb res=4
resfd not an eventfd         -1 EINVAL
resfd closed                 -1 EBADF
pipe read RWF_NOWAIT         1 
nowait event                 1 data=1000 obj=iocb res=-11
fsync of a pipe              -1 EINVAL
poll empty pipe              1 
getevents, poll waits        0 
cancel the poll              -1 EINPROGRESS
cancelled poll event         1 data=1005 obj=iocb res=0
cancel it again              -1 EINVAL
cancel with a bad key        -1 EINVAL
poll empty pipe again        1 
poll event after a write     1 data=1005 obj=iocb res=65
poll pipe with data          1 
ready poll event             1 data=1005 obj=iocb res=1
poll with a size             -1 EINVAL
getevents, SA_RESTART alarm  -1 EINTR
alarms 1
destroy                      0 
maps: no ring
aio-nr back by 0
destroy again                -1 EINVAL
submit after destroy         -1 EINVAL
setup again                  0 
second ring id 0
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "aio", PROGRAM, arch=request.param)


def test_native_aio_as_natively(program, tmp_path):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True,
                            cwd=tmp_path)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout.decode() == EXPECTED, result.describe()
