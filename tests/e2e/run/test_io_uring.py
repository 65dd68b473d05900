"""io_uring (issue 32, LTP io_uring01 and io_uring03 were ENOSYS): a C program built by the
host's gcc (static; -m32 for i386) drives the rings itself, as LTP and liburing do, and is
compared with its native run: io_uring_setup's checks (EINVAL for no entries, reserved
words, an unknown flag, too many entries without IORING_SETUP_CLAMP, a CQ smaller than the
SQ; EFAULT), the sizes it rounds to, the offsets, IORING_FEAT_SINGLE_MMAP and a close-on-exec
fd; the rings mapped at their offsets; io_uring_enter's checks (EINVAL, EOPNOTSUPP, EBADF);
NOP, WRITE, READ, WRITEV, READV, FSYNC and READ_FIXED completing with their user_data and
res (-EINVAL for FSYNC's unknown flags and an unknown opcode, -EBADF, -EFAULT for a fixed
read without or outside a registered buffer); io_uring_register's buffers (EBUSY, ENXIO,
EINVAL); a read of an empty pipe that completes once a write fills it."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.run.io_uring_ring import RING_HELPERS
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = RING_HELPERS + r"""
int main(void) {
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    result("setup 0 entries", setup(0, &p));
    result("setup NULL params", setup(4, NULL));
    p.resv[1] = 1;
    result("setup reserved set", setup(4, &p));
    memset(&p, 0, sizeof p); p.flags = 1u << 31;
    result("setup unknown flag", setup(4, &p));
    memset(&p, 0, sizeof p);
    result("setup too many", setup(40000, &p));
    memset(&p, 0, sizeof p); p.flags = IORING_SETUP_CLAMP;
    int big = setup(40000, &p);
    printf("clamped: sq %u cq %u\n", p.sq_entries, p.cq_entries);
    close(big);
    memset(&p, 0, sizeof p); p.flags = IORING_SETUP_CQSIZE; p.cq_entries = 2;
    result("cqsize below sq", setup(4, &p));
    memset(&p, 0, sizeof p); p.flags = IORING_SETUP_CQSIZE; p.cq_entries = 10;
    int sized = setup(3, &p);
    printf("cqsize: sq %u cq %u\n", p.sq_entries, p.cq_entries);
    close(sized);
    memset(&p, 0, sizeof p);
    ring = setup(3, &p);
    printf("setup: sq %u cq %u single_mmap %d cloexec %d\n", p.sq_entries, p.cq_entries,
           !!(p.features & IORING_FEAT_SINGLE_MMAP), fcntl(ring, F_GETFD) == FD_CLOEXEC);
    char *sq, *cq;
    map_rings(&p, &sq, &cq);
    printf("masks %u %u, entries %u %u\n", *sq_mask, *cq_mask,
           *(unsigned *)(sq + p.sq_off.ring_entries), *(unsigned *)(cq + p.cq_off.ring_entries));

    result("enter bad flags", enter(ring, 0, 0, 1u << 30));
    result("enter not a ring", enter(0, 0, 0, 0));
    result("enter bad fd", enter(99, 0, 0, 0));
    result("enter nothing queued", enter(ring, 4, 0, 0));
    run("nop", IORING_OP_NOP, 0, NULL, 0, 0, 7);
    int fd = open("uring.tmp", O_RDWR | O_CREAT | O_TRUNC, 0600);
    char out[32] = "ring of data", in[32] = {0};
    run("write", IORING_OP_WRITE, fd, out, 12, 4, 1);
    run("read", IORING_OP_READ, fd, in, 32, 4, 2);
    printf("read back \"%s\"\n", in);
    char a[4] = "ab", b[8] = "cdefg";
    struct iovec v[2] = {{a, 2}, {b, 5}};
    run("writev", IORING_OP_WRITEV, fd, v, 2, 0, 3);
    memset(a, 0, 4); memset(b, 0, 8);
    run("readv", IORING_OP_READV, fd, v, 2, 1, 4);
    printf("readv got %.2s|%.5s\n", a, b);
    run("fsync", IORING_OP_FSYNC, fd, NULL, 0, 0, 5);
    queue(IORING_OP_FSYNC, fd, NULL, 0, 0, 6);
    sqes[(*sq_tail - 1) & *sq_mask].fsync_flags = 8;
    enter(ring, 1, 1, IORING_ENTER_GETEVENTS); reap("fsync bad flags");
    run("unknown opcode", 200, fd, NULL, 0, 0, 8);
    run("read bad fd", IORING_OP_READ, 99, in, 4, 0, 9);
    int wr = open("uring.tmp", O_WRONLY);
    run("read write-only fd", IORING_OP_READ, wr, in, 4, 0, 10);
    run("read_fixed unregistered", IORING_OP_READ_FIXED, fd, in, 4, 0, 11);
    struct iovec fixed = {in, sizeof in};
    result("register buffers", reg(IORING_REGISTER_BUFFERS, &fixed, 1));
    result("register them again", reg(IORING_REGISTER_BUFFERS, &fixed, 1));
    memset(in, 0, sizeof in);
    run("read_fixed", IORING_OP_READ_FIXED, fd, in, 8, 4, 12);
    printf("fixed got \"%s\"\n", in);
    run("read_fixed outside", IORING_OP_READ_FIXED, fd, in + 30, 8, 0, 13);
    result("unregister", reg(IORING_UNREGISTER_BUFFERS, NULL, 0));
    result("unregister again", reg(IORING_UNREGISTER_BUFFERS, NULL, 0));
    result("unknown register op", reg(999, NULL, 0));

    int pfd[2];
    pipe(pfd);
    queue(IORING_OP_READ, pfd[0], in, 3, -1, 14);
    result("submit an empty pipe's read", enter(ring, 1, 0, 0));
    printf("completions before the write: %u\n", *cq_tail - *cq_head);
    write(pfd[1], "xyz", 3);
    result("wait for it", enter(ring, 0, 1, IORING_ENTER_GETEVENTS));
    reap("pipe read");
    printf("pipe gave %.3s\n", in);
    unlink("uring.tmp");
    return 0;
}
"""

EXPECTED = """\
setup 0 entries                -1 EINVAL
setup NULL params              -1 EFAULT
setup reserved set             -1 EINVAL
setup unknown flag             -1 EINVAL
setup too many                 -1 EINVAL
clamped: sq 32768 cq 65536
cqsize below sq                -1 EINVAL
cqsize: sq 4 cq 16
setup: sq 4 cq 8 single_mmap 1 cloexec 1
masks 3 7, entries 4 8
enter bad flags                -1 EINVAL
enter not a ring               -1 EOPNOTSUPP
enter bad fd                   -1 EBADF
enter nothing queued           0 
nop                            data=7 res=0
write                          data=1 res=12
read                           data=2 res=12
read back "ring of data"
writev                         data=3 res=7
readv                          data=4 res=7
readv got bc|defgg
fsync                          data=5 res=0
fsync bad flags                data=6 res=-22
unknown opcode                 data=8 res=-22
read bad fd                    data=9 res=-9
read write-only fd             data=10 res=-9
read_fixed unregistered        data=11 res=-14
register buffers               0 
register them again            -1 EBUSY
read_fixed                     data=12 res=8
fixed got "efgg of "
read_fixed outside             data=13 res=-14
unregister                     0 
unregister again               -1 ENXIO
unknown register op            -1 EINVAL
submit an empty pipe's read    1 
completions before the write: 0
wait for it                    0 
pipe read                      data=14 res=3
pipe gave xyz
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "uring", PROGRAM, arch=request.param)


def test_io_uring_as_natively(program, tmp_path):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout.decode() == EXPECTED, result.describe()
