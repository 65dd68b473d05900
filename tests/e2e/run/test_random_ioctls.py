"""/dev/random's and /dev/urandom's ioctls (issue 32, LTP ioctl07 got ENOTTY for RNDGETENTCNT):
drivers/char/random.c random_ioctl. RNDGETENTCNT reads the pool's entropy count, which agrees
with /proc/sys/kernel/random/entropy_avail (a ready pool: 256); the adding and clearing
requests are root's (EPERM without CAP_SYS_ADMIN), a negative count is EINVAL, an unreadable
argument EFAULT, any other request EINVAL (not ENOTTY). Compared with the native run on both
arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <linux/random.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static void requests(int fd, const char *who) {
    char what[64];
    int count = -7;
    struct { int count, size; unsigned char buf[8]; } info = { 8, 8, "abcdefg" };
    int minus = -1;
#define TRY(name, req, arg) snprintf(what, sizeof what, "%s %s", who, name); result(what, ioctl(fd, req, arg))
    TRY("RNDGETENTCNT", RNDGETENTCNT, &count);
    printf("%s count %d\n", who, count);
    TRY("RNDGETENTCNT bad", RNDGETENTCNT, (void *)8);
    TRY("RNDADDTOENTCNT", RNDADDTOENTCNT, &count);
    TRY("RNDADDTOENTCNT -1", RNDADDTOENTCNT, &minus);
    TRY("RNDADDTOENTCNT bad", RNDADDTOENTCNT, (void *)8);
    TRY("RNDADDENTROPY", RNDADDENTROPY, &info);
    info.size = -1;
    TRY("RNDADDENTROPY size -1", RNDADDENTROPY, &info);
    info.size = 8; info.count = -1;
    TRY("RNDADDENTROPY count -1", RNDADDENTROPY, &info);
    TRY("RNDZAPENTCNT", RNDZAPENTCNT, 0);
    TRY("RNDCLEARPOOL", RNDCLEARPOOL, 0);
    TRY("RNDRESEEDCRNG", RNDRESEEDCRNG, 0);
    TRY("RNDGETPOOL", _IOR('R', 0x02, int[2]), &count);
    TRY("TCGETS", 0x5401, &count);
    TRY("FIONREAD", 0x541B, &count);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("/dev/urandom", O_RDONLY), rfd = open("/dev/random", O_RDONLY);
    char text[16] = {0};
    int proc = open("/proc/sys/kernel/random/entropy_avail", O_RDONLY);
    read(proc, text, sizeof text - 1);
    printf("entropy_avail %s", text);
    requests(fd, "urandom root");
    requests(rfd, "random root");
    if (fork() == 0) {
        setuid(65534);
        requests(fd, "urandom nobody");
        _exit(0);
    }
    wait(NULL);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "random_ioctls", PROGRAM, arch=request.param)


def test_random_ioctls_as_natively(program):
    compare_with_native(program, b"urandom root count 256", b"urandom nobody RNDADDTOENTCNT -1 EPERM",
                        b"urandom root RNDGETPOOL    -1 EINVAL")
