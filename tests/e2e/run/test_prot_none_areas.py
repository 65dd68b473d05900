"""PROT_NONE areas as a program sees them, compared with its native run (both arches): a load
or store there is SIGSEGV with SEGV_ACCERR at the address, mprotect opens a page (zero), its byte
survives PROT_NONE again, write(2) from it is EFAULT, a fork's child reads it, mremap moves a
never-touched page, MADV_DONTNEED is fine there, and after munmap a load is SEGV_MAPERR. The
model leaves a never-touched PROT_NONE area without pages (kernel_model/memory/vm.py map_area):
this is what that must not change. Built by the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile int code;
static volatile long offset;
static char *base;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    code = si->si_code;
    offset = (char *)si->si_addr - base;
    siglongjmp(back, 1);
}

static void touch(const char *what, char *at, int store) {
    if (!sigsetjmp(back, 1)) {
        if (store)
            *(volatile char *)at = 1;
        else
            (void)*(volatile char *)at;
        printf("%s: no fault\n", what);
    } else {
        printf("%s: SIGSEGV code %d at +%ld\n", what, code, offset);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    size_t page = 4096;
    base = mmap(NULL, 4 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    touch("load from a new PROT_NONE area", base + page + 5, 0);
    touch("store into it", base + 2 * page, 1);
    printf("mprotect one page: %d\n", mprotect(base + page, page, PROT_READ | PROT_WRITE));
    printf("it reads %d\n", base[page + 5]);
    base[page + 5] = 42;
    mprotect(base + page, page, PROT_NONE);
    touch("load after PROT_NONE again", base + page + 5, 0);
    errno = 0;
    long n = write(1, base + page, 1);
    printf("write(2) from it: %ld errno %d\n", n, errno);
    if (fork() == 0) {
            printf("child mprotect: %d\n", mprotect(base, 4 * page, PROT_READ));
        printf("child reads %d\n", base[page + 5]);
        printf("and %d\n", base[3 * page]);
        exit(0);
    }
    wait(NULL);
    char *far = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *moved = mremap(base + 3 * page, page, page, MREMAP_MAYMOVE | MREMAP_FIXED, far);
    printf("mremap: %d\n", moved == far);
    base = far;
    touch("load from the moved page", far + 7, 0);
    printf("mprotect it: %d\n", mprotect(far, page, PROT_READ));
    printf("it reads %d\n", far[7]);
    printf("madvise DONTNEED: %d\n", madvise(far, 2 * page, MADV_DONTNEED));
    printf("munmap: %d\n", munmap(far, 2 * page));
    touch("load after munmap", far + 9, 0);
    return 0;
}
"""
EXPECTED = b"""\
load from a new PROT_NONE area: SIGSEGV code 2 at +4101
store into it: SIGSEGV code 2 at +8192
mprotect one page: 0
it reads 0
load after PROT_NONE again: SIGSEGV code 2 at +4101
write(2) from it: -1 errno 14
child mprotect: 0
child reads 42
and 0
mremap: 1
load from the moved page: SIGSEGV code 2 at +7
mprotect it: 0
it reads 0
madvise DONTNEED: 0
munmap: 0
load after munmap: SIGSEGV code 1 at +9
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "prot_none", PROGRAM, arch=request.param)


def test_prot_none_areas_behave_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
