"""A MAP_GROWSDOWN area grows when the program stores below it (issue 32, LTP mmap18: the child
died of SIGSEGV), and a store that would bring it within the stack guard gap (256 pages) of the
area below is SIGSEGV; compared with the native run. Built by the host's gcc (static; -m32 for
i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_status(char *at) {
    int status;
    if (fork() == 0) {
        *(volatile char *)at = 1;
        unsigned char vec;
        exit(mincore((void *)((unsigned long)at & ~4095UL), 4096, &vec) == 0 ? 0 : 2);
    }
    wait(&status);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    size_t page = 4096;
    char *hole = mmap(NULL, 1024 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(hole, 1024 * page);                   /* 4 MiB of free addresses */
    char *top = hole + 1000 * page;
    char *area = mmap(top, 2 * page, PROT_READ | PROT_WRITE,
                      MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
    printf("mapped: %d\n", area == top);
    printf("store 8 pages below: %d\n", child_status(area - 8 * page));
    mmap(area - 100 * page, page, PROT_READ | PROT_WRITE,
         MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);     /* within the guard gap */
    printf("store near the area below: %d\n", child_status(area - 8 * page));
    return 0;
}
"""
EXPECTED = b"mapped: 1\nstore 8 pages below: 0\nstore near the area below: -11\n"


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "grows", PROGRAM, arch=request.param)


def test_growsdown_area_grows_outside_the_guard_gap(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
