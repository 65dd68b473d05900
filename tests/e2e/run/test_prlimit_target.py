"""prlimit64 on another process and do_prlimit's checks (found looking at issue 32's RLIMIT_CPU:
prlimit64 read and set the caller's own limits whatever pid it named, wrote the old limits
before checking the new ones, and nobody could raise a hard limit): kernel/sys.c's order,
EFAULT for the new limits first, then ESRCH, EPERM from check_prlimit_permission (another
user's process), EINVAL for the resource or a soft limit above the hard one, EPERM for a hard
limit raised without CAP_SYS_RESOURCE, the old limits written only on success; the target's
limit is what the target then reads. setrlimit reads its struct before the resource check.
Compared with the native run on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long plimit(pid_t pid, int resource, const struct rlimit64 *new, struct rlimit64 *old) {
    return syscall(SYS_prlimit64, pid, resource, new, old);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int report[2], go[2];
    pipe(report); pipe(go);
    pid_t child = fork();
    if (child == 0) {
        char c;
        read(go[0], &c, 1);
        struct rlimit r;
        getrlimit(RLIMIT_NOFILE, &r);
        dprintf(report[1], "child sees %lu %lu\n", (unsigned long)r.rlim_cur, (unsigned long)r.rlim_max);
        _exit(0);
    }
    struct rlimit64 set = { 64, 512 }, old = { 7, 7 };
    result("prlimit child NOFILE", plimit(child, RLIMIT_NOFILE, &set, &old));
    struct rlimit mine;
    getrlimit(RLIMIT_NOFILE, &mine);
    printf("  old is the parent's %d, parent's unchanged %d\n",
           old.rlim_cur == mine.rlim_cur && old.rlim_max == mine.rlim_max, mine.rlim_cur != 64);
    write(go[1], "x", 1);
    char line[64] = {0};
    read(report[0], line, sizeof line - 1);
    printf("%s", line);
    waitpid(child, NULL, 0);
    result("prlimit reaped child", plimit(child, RLIMIT_NOFILE, NULL, &old));
    result("prlimit no such pid", plimit(999999, RLIMIT_NOFILE, NULL, &old));
    result("bad new, no such pid", plimit(999999, RLIMIT_NOFILE, (void *)8, &old));
    result("bad resource", plimit(0, 99, NULL, &old));
    struct rlimit64 inverted = { 10, 5 }, untouched = { 3, 3 };
    result("soft above hard", plimit(0, RLIMIT_NOFILE, &inverted, &untouched));
    printf("  old left alone %d\n", untouched.rlim_cur == 3);
    result("setrlimit bad pointer", syscall(SYS_setrlimit, 99, (void *)8));
    result("setrlimit bad resource", syscall(SYS_setrlimit, 99, &mine));
    pid_t nobody = fork();
    if (nobody == 0) {
        setuid(65534);
        result("nobody prlimit root's", plimit(getppid(), RLIMIT_NOFILE, NULL, &old));
        struct rlimit r;
        getrlimit(RLIMIT_NOFILE, &r);
        r.rlim_max += 1;
        result("nobody raises its hard", setrlimit(RLIMIT_NOFILE, &r));
        r.rlim_max -= 2;
        if (r.rlim_cur > r.rlim_max) r.rlim_cur = r.rlim_max;
        result("nobody lowers its hard", setrlimit(RLIMIT_NOFILE, &r));
        result("nobody prlimit itself", plimit(0, RLIMIT_NOFILE, NULL, &old));
        _exit(0);
    }
    waitpid(nobody, NULL, 0);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "prlimit_target", PROGRAM, arch=request.param)


def test_prlimit_on_another_process_as_natively(program):
    compare_with_native(program, b"child sees 64 512", b"nobody prlimit root's      -1 EPERM",
                        b"nobody raises its hard     -1 EPERM", b"bad new, no such pid       -1 EFAULT")
