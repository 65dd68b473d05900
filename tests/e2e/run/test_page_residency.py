"""mincore reports the pages a program has touched, and mlock faults pages in (issue 32, LTP
mincore03 and mlock201: every mapped page was reported resident): a new private mapping has
none, a page written or read is resident, mlock makes its pages resident, a shared page a
child wrote is resident for the parent, MLOCK_ONFAULT faults nothing in, mlock2 without it
does, and a locked PROT_NONE area stays without pages (mm/mincore.c, mm/mlock.c). Compared
with the native run, both arches (static, -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, char *at, int pages) {
    unsigned char vec[8];
    mincore(at, pages * 4096, vec);
    printf("%s: ", what);
    for (int i = 0; i < pages; i++)
        putchar('0' + (vec[i] & 1));
    putchar('\n');
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    show("new private", p, 4);
    p[4096] = 1;
    (void)*(volatile char *)(p + 2 * 4096);
    show("page 1 written, page 2 read", p, 4);
    mlock(p + 3 * 4096, 4096);
    show("page 3 locked", p, 4);
    char *s = mmap(NULL, 4 * 4096, PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (fork() == 0) {
        s[0] = 1;
        _exit(0);
    }
    wait(NULL);
    show("shared, the child wrote page 0", s, 4);
    syscall(SYS_mlock2, s + 4096, 4096, 1);       /* MLOCK_ONFAULT */
    show("page 1 locked on fault", s, 4);
    syscall(SYS_mlock2, s + 2 * 4096, 2 * 4096, 0);
    show("pages 2-3 locked", s, 4);
    char *n = mmap(NULL, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mlock(n, 2 * 4096);
    show("PROT_NONE locked", n, 2);
    return 0;
}
"""
EXPECTED = b"""\
new private: 0000
page 1 written, page 2 read: 0110
page 3 locked: 0111
shared, the child wrote page 0: 1000
page 1 locked on fault: 1000
pages 2-3 locked: 1011
PROT_NONE locked: 00
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "residency", PROGRAM, arch=request.param)


def test_mincore_reports_touched_and_locked_pages(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
