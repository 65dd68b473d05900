"""userfaultfd (issue 32, LTP userfaultfd01, userfaultfd03, userfaultfd05 and mremap07 were
ENOSYS or TCONF): a C program built by the host's gcc (static, -pthread; -m32 for i386) is
compared with its native run. The handshake (EINVAL before it, for a wrong api, an unknown
feature, a second one; the offer written back, zeroes on an error; POLLERR before it), reads
(EAGAIN, EINVAL for a small buffer), registration's checks (mode, alignment, length, a file
mapping), a thread's read and write faults on missing pages queuing a message (event, flags,
address) and sleeping until UFFDIO_COPY or UFFDIO_ZEROPAGE fills the page (EEXIST, ENOENT,
EINVAL, the copy field), a page touched before the registration not missing, write
protection (ENOENT outside a WP range, EINVAL for WP with DONTWAKE, the write held back
while its fault waits, then done once unprotected), a read(2) whose copy into a missing page
waits for the handler as an access would, unregistering and closing (missing pages are zero
pages again, for the kernel's copies too), mremap's MREMAP_DONTUNMAP (EINVAL for other sizes or without
MAYMOVE, the old place empty, a read(2) into it) and /dev/userfaultfd's USERFAULTFD_IOC_NEW.
A host whose kernel refuses userfaultfd (a container's seccomp) checks the sandbox alone."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096
/* the range ioctls modeled (Linux 6.x also offers UFFDIO_MOVE, UFFDIO_POISON...) */
#define KNOWN (1 << _UFFDIO_WAKE | 1 << _UFFDIO_COPY | 1 << _UFFDIO_ZEROPAGE | 1 << _UFFDIO_WRITEPROTECT)
static int uffd;

static void result(const char *what, long r) {
    printf("%-30s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "");
}
static char *anon(int pages) {
    return mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
static long reg(void *start, unsigned long len, unsigned long long mode, unsigned long long *ioctls) {
    struct uffdio_register r = {{(uintptr_t)start, len}, mode, 0};
    long ret = ioctl(uffd, UFFDIO_REGISTER, &r);
    if (ioctls) *ioctls = r.ioctls;
    return ret;
}
static long wprotect(void *start, unsigned long long mode) {
    struct uffdio_writeprotect w = {{(uintptr_t)start, PAGE}, mode};
    return ioctl(uffd, UFFDIO_WRITEPROTECT, &w);
}

struct access { char *at; int write; char seen; };
struct syscall_copy { int fd; char *at; long n; };
static void *reader(void *arg) {        /* the kernel's copy faults, as an access would */
    struct syscall_copy *c = arg;
    c->n = read(c->fd, c->at, 3);
    return NULL;
}
static void *touch(void *arg) {
    struct access *a = arg;
    if (a->write) *a->at = 'W'; else a->seen = *(volatile char *)a->at;
    return NULL;
}
/* The faulting thread waits in the fault; this one reads its message. */
static struct uffd_msg next_message(void) {
    struct pollfd p = {uffd, POLLIN, 0};
    struct uffd_msg m;
    poll(&p, 1, -1);
    if (read(uffd, &m, sizeof m) != sizeof m) printf("short read\n");
    return m;
}
static void show(struct uffd_msg m, char *page) {
    printf("message: event %#x flags %llu at %s\n", m.event,
           (unsigned long long)m.arg.pagefault.flags,
           m.arg.pagefault.address == (uintptr_t)page ? "the page" : "elsewhere");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char *page = anon(4), *src = anon(1), msgbuf[64];
    memset(src, 'X', PAGE);
    result("userfaultfd bad flags", syscall(__NR_userfaultfd, 0x10));
    uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (uffd < 0) { result("userfaultfd", -1); return 3; }     /* a host without it */
    printf("fd flags %s\n", fcntl(uffd, F_GETFD) == FD_CLOEXEC ? "cloexec" : "none");
    struct pollfd p = {uffd, POLLIN, 0};
    result("poll before the api", poll(&p, 1, 0));
    printf("revents %#x\n", p.revents);
    result("read before the api", read(uffd, msgbuf, sizeof msgbuf));
    result("register before the api", reg(page, PAGE, UFFDIO_REGISTER_MODE_MISSING, NULL));
    struct uffdio_api api = {0x55, 0, 0};
    result("api with a wrong api", ioctl(uffd, UFFDIO_API, &api));
    printf("api after: %llx %llx %llx\n", (unsigned long long)api.api,
           (unsigned long long)api.features, (unsigned long long)api.ioctls);
    api = (struct uffdio_api){UFFD_API, 1ULL << 62, 0};
    result("api with an unknown feature", ioctl(uffd, UFFDIO_API, &api));
    api = (struct uffdio_api){UFFD_API, UFFD_FEATURE_PAGEFAULT_FLAG_WP, 0};
    result("api", ioctl(uffd, UFFDIO_API, &api));
    printf("api: %llx wp %d ioctls %llx\n", (unsigned long long)api.api,
           !!(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP), (unsigned long long)api.ioctls);
    result("api again", ioctl(uffd, UFFDIO_API, &api));
    result("read, nothing", read(uffd, msgbuf, sizeof msgbuf));
    result("read, small buffer", read(uffd, msgbuf, 8));

    unsigned long long ioctls = 0;
    result("register mode 0", reg(page, PAGE, 0, NULL));
    result("register unaligned", reg(page + 1, PAGE, UFFDIO_REGISTER_MODE_MISSING, NULL));
    result("register length 0", reg(page, 0, UFFDIO_REGISTER_MODE_MISSING, NULL));
    int fd = open("/proc/self/exe", O_RDONLY);
    char *file = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    result("register a file mapping", reg(file, PAGE, UFFDIO_REGISTER_MODE_MISSING, NULL));
    page[2 * PAGE] = 'T';                 /* touched before: not missing */
    result("register", reg(page, 3 * PAGE, UFFDIO_REGISTER_MODE_MISSING, &ioctls));
    printf("range ioctls %llx\n", ioctls & KNOWN);

    pthread_t t;
    struct access a = {page + 15, 0, 0};
    pthread_create(&t, NULL, touch, &a);
    struct uffd_msg m = next_message();
    show(m, page);
    struct uffdio_copy copy = {(uintptr_t)page, (uintptr_t)src, PAGE, 0, 0};
    result("copy", ioctl(uffd, UFFDIO_COPY, &copy));
    pthread_join(t, NULL);
    printf("copied %lld, the reader saw %c\n", (long long)copy.copy, a.seen);
    result("copy onto it again", ioctl(uffd, UFFDIO_COPY, &copy));
    printf("copy field %lld\n", (long long)copy.copy);
    copy.dst = (uintptr_t)(page + 3 * PAGE);
    result("copy outside the range", ioctl(uffd, UFFDIO_COPY, &copy));
    copy.dst = (uintptr_t)page + 1;
    result("copy unaligned", ioctl(uffd, UFFDIO_COPY, &copy));

    struct access w = {page + PAGE + 7, 1, 0};
    pthread_create(&t, NULL, touch, &w);
    m = next_message();
    show(m, page + PAGE);
    struct uffdio_zeropage z = {{(uintptr_t)page + PAGE, PAGE}, 0, 0};
    result("zeropage", ioctl(uffd, UFFDIO_ZEROPAGE, &z));
    pthread_join(t, NULL);
    printf("zeropage %lld, the page holds %c then %d\n", (long long)z.zeropage,
           page[PAGE + 7], page[PAGE + 8]);
    printf("the touched page still holds %c\n", page[2 * PAGE]);
    result("writeprotect, no wp mode", wprotect(page, UFFDIO_WRITEPROTECT_MODE_WP));

    char *wp = anon(1);
    memset(wp, 0, PAGE);
    result("register wp", reg(wp, PAGE, UFFDIO_REGISTER_MODE_WP, &ioctls));
    printf("wp range ioctls %llx\n", ioctls & KNOWN);
    result("register it again", reg(wp, PAGE, UFFDIO_REGISTER_MODE_WP, NULL));
    result("writeprotect wp|dontwake", wprotect(wp, UFFDIO_WRITEPROTECT_MODE_WP | UFFDIO_WRITEPROTECT_MODE_DONTWAKE));
    result("writeprotect", wprotect(wp, UFFDIO_WRITEPROTECT_MODE_WP));
    printf("a read of it: %d\n", wp[3]);
    struct access ww = {wp + 3, 1, 0};
    pthread_create(&t, NULL, touch, &ww);
    m = next_message();
    show(m, wp);
    printf("while it waits the page holds %d\n", wp[3]);
    result("unprotect", wprotect(wp, 0));
    pthread_join(t, NULL);
    printf("after: %c\n", wp[3]);

    struct uffdio_range range = {(uintptr_t)page + 3 * PAGE, PAGE};
    result("unregister", ioctl(uffd, UFFDIO_UNREGISTER, &range));
    printf("an unregistered missing page reads %d\n", page[3 * PAGE]);
    char *late = anon(1);
    result("register another", reg(late, PAGE, UFFDIO_REGISTER_MODE_MISSING, NULL));
    int pp[2];
    pipe(pp);
    write(pp[1], "sys!", 4);
    struct syscall_copy rd = {pp[0], late + 64, 0};
    pthread_create(&t, NULL, reader, &rd);
    m = next_message();
    show(m, late);
    struct uffdio_copy fill = {(uintptr_t)late, (uintptr_t)src, PAGE, 0, 0};
    result("copy under a read(2)", ioctl(uffd, UFFDIO_COPY, &fill));
    pthread_join(t, NULL);
    printf("read(2) into it gave %ld: %.3s after %c\n", rd.n, late + 64, late[0]);
    char *later = anon(1);
    result("register a third", reg(later, PAGE, UFFDIO_REGISTER_MODE_MISSING, NULL));
    close(uffd);
    printf("after close, a missing page reads %d\n", later[5]);
    result("read(2) into another", read(pp[0], later + 8, 1));

    char *old = anon(1);
    strcpy(old, "moved");
    result("dontunmap, sizes differ", (long)mremap(old, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP));
    result("dontunmap without maymove", (long)mremap(old, PAGE, PAGE, MREMAP_DONTUNMAP));
    char *moved = (char *)syscall(SYS_mremap, old, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
    if (moved == MAP_FAILED) { result("dontunmap", -1); return 1; }
    printf("dontunmap: new holds \"%s\", old holds %d\n", moved, old[0]);
    int pipefd[2];
    pipe(pipefd);
    write(pipefd[1], "abc", 3);
    char *again = (char *)syscall(SYS_mremap, moved, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0);
    result("read() into an emptied page", read(pipefd[0], moved + 100, 3));
    printf("it holds %.3s, moved on: \"%s\"\n", moved + 100, again);

    int dev = open("/dev/userfaultfd", O_RDWR);
    result("/dev/userfaultfd other ioctl", ioctl(dev, 0xAA01, 0));
    int made = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
    result("/dev/userfaultfd new", made > 0 ? 0 : -1);
    api = (struct uffdio_api){UFFD_API, 0, 0};
    result("its api", ioctl(made, UFFDIO_API, &api));
    return 0;
}
"""

EXPECTED = """\
userfaultfd bad flags          -1 EINVAL
fd flags cloexec
poll before the api            1 
revents 0x8
read before the api            -1 EINVAL
register before the api        -1 EINVAL
api with a wrong api           -1 EINVAL
api after: 0 0 0
api with an unknown feature    -1 EINVAL
api                            0 
api: aa wp 1 ioctls 8000000000000003
api again                      -1 EINVAL
read, nothing                  -1 EAGAIN
read, small buffer             -1 EINVAL
register mode 0                -1 EINVAL
register unaligned             -1 EINVAL
register length 0              -1 EINVAL
register a file mapping        -1 EINVAL
register                       0 
range ioctls 1c
message: event 0x12 flags 0 at the page
copy                           0 
copied 4096, the reader saw X
copy onto it again             -1 EEXIST
copy field -17
copy outside the range         -1 ENOENT
copy unaligned                 -1 EINVAL
message: event 0x12 flags 1 at the page
zeropage                       0 
zeropage 4096, the page holds W then 0
the touched page still holds T
writeprotect, no wp mode       -1 ENOENT
register wp                    0 
wp range ioctls 5c
register it again              0 
writeprotect wp|dontwake       -1 EINVAL
writeprotect                   0 
a read of it: 0
message: event 0x12 flags 3 at the page
while it waits the page holds 0
unprotect                      0 
after: W
unregister                     0 
an unregistered missing page reads 0
register another               0 
message: event 0x12 flags 1 at the page
copy under a read(2)           0 
read(2) into it gave 3: sys after X
register a third               0 
after close, a missing page reads 0
read(2) into another           1 
dontunmap, sizes differ        -1 EINVAL
dontunmap without maymove      -1 EINVAL
dontunmap: new holds "moved", old holds 0
read() into an emptied page    3 
it holds abc, moved on: "moved"
/dev/userfaultfd other ioctl   -1 EINVAL
/dev/userfaultfd new           0 
its api                        0 
"""
NO_USERFAULTFD = 3          # the program's status when the host refuses userfaultfd(2)


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "uffd", PROGRAM, ("-pthread",), arch=request.param)


def test_userfaultfd_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    if native.returncode != NO_USERFAULTFD:
        assert (native.returncode, native.stdout) == (0, EXPECTED)
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
