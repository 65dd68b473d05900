"""membarrier(2) (issue 32, LTP membarrier01 got ENOSYS): QUERY's command mask, EINVAL for an
unknown command or flags (only PRIVATE_EXPEDITED_RSEQ takes MEMBARRIER_CMD_FLAG_CPU), EPERM for
a private expedited barrier before its registration and 0 after, GET_REGISTRATIONS' mask (a
SYNC_CORE or RSEQ registration reports the plain private one too), a fork inheriting the
registrations and an exec starting without (kernel/sched/membarrier.c). Compared with the
native run on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble(shown="r") + r"""
#include <sys/syscall.h>
#include <sys/wait.h>

static long mb(int cmd, unsigned flags, int cpu) { return syscall(SYS_membarrier, cmd, flags, cpu); }

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) {
        result("exec'd GET_REGISTRATIONS", mb(512, 0, 0));
        result("exec'd PRIVATE_EXPEDITED", mb(8, 0, 0));
        return 0;
    }
    result("QUERY", mb(0, 0, 0));
    result("QUERY flags 1", mb(0, 1, 0));
    result("bad command -1", mb(-1, 0, 0));
    result("bad command 3", mb(3, 0, 0));
    result("GLOBAL", mb(1, 0, 0));
    result("GLOBAL flags 2", mb(1, 2, 0));
    result("GLOBAL_EXPEDITED", mb(2, 0, 0));
    result("PRIVATE_EXPEDITED", mb(8, 0, 0));
    result("PRIVATE_EXPEDITED_SYNC_CORE", mb(32, 0, 0));
    result("PRIVATE_EXPEDITED_RSEQ cpu", mb(128, 1, 0));
    result("PRIVATE_EXPEDITED_RSEQ 2", mb(128, 2, 0));
    result("GET_REGISTRATIONS", mb(512, 0, 0));
    result("REGISTER_SYNC_CORE", mb(64, 0, 0));
    result("GET_REGISTRATIONS", mb(512, 0, 0));
    result("PRIVATE_EXPEDITED", mb(8, 0, 0));
    result("PRIVATE_EXPEDITED_SYNC_CORE", mb(32, 0, 0));
    result("REGISTER_PRIVATE", mb(16, 0, 0));
    result("PRIVATE_EXPEDITED", mb(8, 0, 0));
    result("REGISTER_GLOBAL", mb(4, 0, 0));
    result("REGISTER_GLOBAL again", mb(4, 0, 0));
    result("GET_REGISTRATIONS", mb(512, 0, 0));
    pid_t child = fork();
    if (child == 0) {
        result("child GET_REGISTRATIONS", mb(512, 0, 0));
        result("child PRIVATE_EXPEDITED", mb(8, 0, 0));
        execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        _exit(1);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child status %d\n", status);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "membarrier", PROGRAM, arch=request.param)


def test_membarrier_as_natively(program):
    compare_with_native(program, b"PRIVATE_EXPEDITED          -1 EPERM", b"GET_REGISTRATIONS          80",
                        b"child GET_REGISTRATIONS    84", b"exec'd GET_REGISTRATIONS   0")
