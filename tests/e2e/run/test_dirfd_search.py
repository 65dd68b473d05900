"""A *at call relative to a directory descriptor walks from that directory only (fs/namei.c
path_init: nd->path is the file's own path), so a caller that may not search the folders
above it still reaches what is beneath (LTP fchownat03: as nobody, fchownat(dirfd, ...) was
ENOTDIR, because the sandbox checked the descriptor by walking to it again).

A C program built by the host's gcc (static; -m32 for i386): root makes a folder only root
may search and a world-searchable folder with a file in it, opens the inner folder, becomes
nobody (seteuid) and reaches the file through the descriptor (fstatat, fchownat, openat)
and, for contrast, by its full path (EACCES). The sandbox must print what the native run
printed."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char top[64], inner[96], file[128];
    strcpy(top, "/tmp/tl-dirfd-XXXXXX");
    mkdtemp(top);                                   /* 0700, root's */
    sprintf(inner, "%s/in", top);
    sprintf(file, "%s/f", inner);
    mkdir(inner, 0777);
    chmod(inner, 0777);
    close(open(file, O_CREAT | O_WRONLY, 0666));
    chmod(file, 0666);
    int dir = open(inner, O_DIRECTORY | O_RDONLY);
    result("seteuid nobody", seteuid(65534));
    struct stat st;
    result("fstatat through dirfd", fstatat(dir, "f", &st, 0));
    result("fchownat own ids", fchownat(dir, "f", -1, -1, 0));
    result("openat through dirfd", openat(dir, "f", O_RDONLY) >= 0 ? 0 : -1);
    result("stat by full path", stat(file, &st));
    seteuid(0);
    unlink(file);
    rmdir(inner);
    rmdir(top);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "dirfd_search", PROGRAM, arch=request.param)


def test_dirfd_walks_from_its_own_directory(program):
    compare_with_native(program, b"fstatat through dirfd      0",
                        b"stat by full path          -1 EACCES")
