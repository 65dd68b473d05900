"""statx's mask and flags and setgroups' permission, checked first (issue 32, LTP statx03: a
reserved mask bit or unknown flags were accepted; setgroups03: setgroups succeeded for a
process whose effective uid left 0): do_statx refuses STATX__RESERVED and both sync flags,
vfs_statx unknown flags, before the lookup (EINVAL even for a bad fd); setgroups asks
CAP_SETGID before the size (may_setgroups). Compared with the native run; built by the host's
gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-24s ") + r"""
#include <grp.h>
int main(void) {
    struct statx stx;
    result("statx mask -1", statx(AT_FDCWD, "/", 0, 0xFFFFFFFF, &stx));
    result("statx flags -1", statx(AT_FDCWD, "/", -1, STATX_BASIC_STATS, &stx));
    result("statx both syncs", statx(AT_FDCWD, "/", AT_STATX_FORCE_SYNC | AT_STATX_DONT_SYNC, 0, &stx));
    result("statx bad fd first?", statx(-1, "x", 0, 0xFFFFFFFF, &stx));
    result("statx ok", statx(AT_FDCWD, "/", AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &stx));
    gid_t g = 42;
    result("setgroups root", setgroups(1, &g));
    seteuid(65534);
    result("setgroups as nobody", setgroups(1, &g));
    result("setgroups too many", setgroups(70000, &g));
    seteuid(0);
    result("setgroups too many root", setgroups(70000, &g));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "statx_setgroups_checks", PROGRAM, arch=request.param)


def test_checks_as_natively(program):
    compare_with_native(program, b"setgroups as nobody      -1 EPERM")
