"""/proc/self/pagemap (issue 32, LTP mmap12: open failed with ENOENT): one word a virtual page
(fs/proc/task_mmu.c pagemap_read): bit 63 for a present page (one the program touched), with
a frame number root may read, bit 56 for a private page mapped once, bit 61 for shared memory;
a page never touched or outside every area is 0; a read at an offset or of a count that is
no multiple of 8 is EINVAL. Compared with the native run, both arches (static, -m32)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t word(int fd, void *addr) {
    uint64_t w = 0;
    pread(fd, &w, 8, (uintptr_t)addr / 4096 * 8);
    return w;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int fd = open("/proc/self/pagemap", O_RDONLY);
    char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    p[4096] = 1;
    char *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    s[0] = 1;
    for (int i = 0; i < 3; i++) {
        uint64_t w = word(fd, p + i * 4096);
        printf("private page %d: present %d exclusive %d file/shared %d frame %d\n", i,
               (int)(w >> 63 & 1), (int)(w >> 56 & 1), (int)(w >> 61 & 1), (w & ((1ULL << 55) - 1)) != 0);
    }
    uint64_t w = word(fd, s);
    printf("shared page: present %d file/shared %d frame %d\n", (int)(w >> 63 & 1), (int)(w >> 61 & 1),
           (w & ((1ULL << 55) - 1)) != 0);
    uint64_t x;
    long r = pread(fd, &x, 8, 4);
    printf("unaligned read: %ld errno %d\n", r, errno);
    errno = 0;
    r = pread(fd, &x, 4, 0);
    printf("short read: %ld errno %d\n", r, errno);
    printf("unmapped page: %d\n", word(fd, (void *)0x10000) == 0);
    return 0;
}
"""
EXPECTED = b"""\
private page 0: present 0 exclusive 0 file/shared 0 frame 0
private page 1: present 1 exclusive 1 file/shared 0 frame 1
private page 2: present 0 exclusive 0 file/shared 0 frame 0
shared page: present 1 file/shared 1 frame 1
unaligned read: -1 errno 22
short read: -1 errno 22
unmapped page: 1
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pagemap", PROGRAM, arch=request.param)


def test_pagemap_tells_present_pages(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
