"""A private file mapping past the end of its file (issue 32): as for a shared one, an access
to a page that holds no byte of the file is SIGBUS with BUS_ADRERR at the address — loads and
stores alike, whatever the protection allows (mm/filemap.c filemap_fault is reached from
do_read_fault and do_cow_fault: VM_FAULT_SIGBUS beyond i_size); the tail of the file's last
page reads zeros, a page the file has grown over since is read in, and the store into it stays
the process's own. A private mapping of /dev/zero has no end. Compared with the native run,
both arches (static, -m32)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile int code, signo;
static volatile long offset;
static char *map;

static void on_fault(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    signo = sig;
    code = si->si_code;
    offset = (char *)si->si_addr - map;
    siglongjmp(back, 1);
}

static void store(const char *what, char *at) {
    if (!sigsetjmp(back, 1)) {
        *(volatile char *)at = 'x';
        printf("%s: stored\n", what);
    } else {
        printf("%s: signal %d code %d at +%ld\n", what, signo, code, offset);
    }
}

static void load(const char *what, char *at) {
    if (!sigsetjmp(back, 1)) {
        int c = *(volatile char *)at;
        printf("%s: read %d\n", what, c);
    } else {
        printf("%s: signal %d code %d at +%ld\n", what, signo, code, offset);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    int fd = open("half", O_RDWR | O_CREAT | O_TRUNC, 0600);
    write(fd, "abc", 3);
    ftruncate(fd, 2048);
    map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    load("the file's first byte", map);
    load("in the file's page, past its end", map + 3000);
    store("there", map + 3000);
    load("on the next page", map + 4096 + 1);
    store("there", map + 4096 + 1);
    ftruncate(fd, 4096 + 10);
    pwrite(fd, "y", 1, 4097);
    load("on it after the file grew", map + 4096 + 1);
    store("there", map + 4096 + 1);
    store("on the page after", map + 2 * 4096);
    char c = 0;
    pread(fd, &c, 1, 4097);
    printf("the file holds '%c' there\n", c);
    munmap(map, 3 * 4096);
    map = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE, fd, 4096);
    load("read-only, past the end", map + 4096);
    munmap(map, 2 * 4096);
    int zero = open("/dev/zero", O_RDONLY);
    map = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, zero, 0);
    store("/dev/zero's second page", map + 4096);
    unlink("half");
    return 0;
}
"""
EXPECTED = b"""\
the file's first byte: read 97
in the file's page, past its end: read 0
there: stored
on the next page: signal 7 code 2 at +4097
there: signal 7 code 2 at +4097
on it after the file grew: read 121
there: stored
on the page after: signal 7 code 2 at +8192
the file holds 'y' there
read-only, past the end: signal 7 code 2 at +4096
/dev/zero's second page: stored
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "past_eof_private", PROGRAM, arch=request.param)


def test_access_past_the_end_of_a_privately_mapped_file_is_sigbus(program, tmp_path):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60,
                            cwd=tmp_path)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
