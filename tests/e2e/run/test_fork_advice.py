"""MADV_WIPEONFORK and MADV_DONTFORK reach a forked child (issue 32, LTP madvise10): the child
finds zeros in a wipe-on-fork area and no mapping at all in a don't-fork one, while the parent
keeps its bytes; compared with the native run. Before, the child got a copy of both. Built by
the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char *wipe = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(wipe, 1, 8192);
    memset(gone, 2, 4096);
    printf("advice: %d %d\n", madvise(wipe, 8192, MADV_WIPEONFORK), madvise(gone, 4096, MADV_DONTFORK));
    int status;
    if (fork() == 0) {
        printf("child: wiped %d %d\n", wipe[0], wipe[8191]);
        unsigned char vec;
        printf("child: don't-fork area mapped: %d\n", mincore(gone, 4096, &vec) == 0);
        exit(0);
    }
    wait(&status);
    printf("parent: %d %d\n", wipe[0], gone[0]);
    return 0;
}
"""
EXPECTED = (b"advice: 0 0\nchild: wiped 0 0\nchild: don't-fork area mapped: 0\nparent: 1 2\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "advice", PROGRAM, arch=request.param)


def test_wipe_and_dont_fork_areas(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
