"""modify_ldt(2) and the LDT in the modeled CPU (issue 32, LTP modify_ldt01/02 and fork05: the
call was ENOSYS): reading with no LDT is 0, an entry written with func 0x11 is read back as
Linux's fill_ldt makes it (the rest of the buffer zeroed), the default LDT is zeros, the
errors are EINVAL for a short struct, contents 3 in the old mode or present, an entry past
8191, ENOSYS for an unknown func (on x86-64 the result is cut to 32 bits, as sys_modify_ldt's
(unsigned int)ret: glibc then sees no error). On i386 a selector of the LDT loads the entry
(%fs:4 reads the segment's second int), a fork's child has a copy, and a selector past the
table's limit is #GP: SIGSEGV (Intel SDM Vol. 3A, 3.5.1). Compared with the native run on
both arches (static, -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long ldt(int func, void *ptr, unsigned long count) {
    errno = 0;
    long r = syscall(SYS_modify_ldt, func, ptr, count);
    return r < 0 ? -errno : r;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned char table[64];
    printf("read with no LDT: %ld\n", ldt(0, table, sizeof table));
    int seg[4] = {12345, 678, 0, 0};
    struct user_desc d = {.entry_number = 2, .base_addr = (unsigned long)seg, .limit = sizeof seg - 1,
                          .seg_32bit = 1, .useable = 1};
    printf("write entry 2: %ld\n", ldt(0x11, &d, sizeof d));
    memset(table, 0xAA, sizeof table);
    printf("read: %ld\n", ldt(0, table, sizeof table));
    unsigned long long e[8];
    memcpy(e, table, sizeof e);
    printf("entries: %llx %llx (base cut) %llx\n", e[0], e[2] & 0x00FFFF000000FFFFULL, e[3]);
    printf("default LDT: %ld\n", ldt(2, table, sizeof table));
    printf("short write: %ld\n", ldt(1, &d, sizeof d - 1));
    d.contents = 3;
    printf("contents 3, old mode: %ld\n", ldt(1, &d, sizeof d));
    printf("contents 3, present: %ld\n", ldt(0x11, &d, sizeof d));
    d.contents = 0;
    d.entry_number = 8192;
    printf("entry 8192: %ld\n", ldt(0x11, &d, sizeof d));
    printf("func 3: %ld\n", ldt(3, &d, sizeof d));
#ifdef __i386__
    int value;
    __asm__ volatile("push $0x17; pop %%fs; movl %%fs:4, %0; push $0; pop %%fs" : "=r"(value));
    printf("through %%fs = entry 2: %d\n", value);
    if (fork() == 0) {
        __asm__ volatile("push $0x17; pop %%fs; movl %%fs:0, %0; push $0; pop %%fs" : "=r"(value));
        printf("the child's copy: %d\n", value);
        __asm__ volatile("push $0x27; pop %%fs; movl %%fs:0, %0" : "=r"(value));
        _exit(0);
    }
    int status;
    wait(&status);
    printf("entry 4 (past the limit): signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
#endif
    return 0;
}
"""
EXPECTED = {
    "x86_64": b"""\
read with no LDT: 0
write entry 2: 0
read: 64
entries: 0 50f3000000000f (base cut) 0
default LDT: 64
short write: 4294967274
contents 3, old mode: 4294967274
contents 3, present: 4294967274
entry 8192: 4294967274
func 3: 4294967258
""",
    "i386": b"""\
read with no LDT: 0
write entry 2: 0
read: 64
entries: 0 50f3000000000f (base cut) 0
default LDT: 64
short write: -22
contents 3, old mode: -22
contents 3, present: -22
entry 8192: -22
func 3: -38
through %fs = entry 2: 678
the child's copy: 12345
entry 4 (past the limit): signal 11
""",
}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_modify_ldt_and_ldt_selectors(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, "ldt", PROGRAM, arch=arch)
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED[arch]
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED[arch], result.describe()
