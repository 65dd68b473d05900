"""/proc/self/smaps (issue 32, LTP mlock05: fopen failed with ENOENT): each area's counts as
fs/proc/task_mmu.c prints them. A private area with three pages written, its mlocked part
(Rss and Locked equal to the size locked, the `lo` flag), and a shared area with one page
written; the program prints Size, KernelPageSize, Rss, Private_Dirty, Anonymous, Swap, Locked
and VmFlags of the three, compared with the native run, both arches (static, -m32 for i386).
Not compared: the maps line of shared anonymous memory (Linux names it /dev/zero (deleted))
and the KSM line, newer than the modeled 6.1."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
    char *p = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(p, 1, 3 * 4096);
    mlock(p + 8 * 4096, 4 * 4096);
    char *s = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    s[0] = 1;
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[256], want[64], want2[64], want3[64];
    int show = 0;
    snprintf(want, sizeof want, "%lx-", (unsigned long)p);
    snprintf(want2, sizeof want2, "%lx-", (unsigned long)s);
    snprintf(want3, sizeof want3, "%lx-", (unsigned long)(p + 8 * 4096));
    while (fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
            show = !strncmp(line, want, strlen(want)) || !strncmp(line, want2, strlen(want2)) ||
                   !strncmp(line, want3, strlen(want3));
        if (show && (!strncmp(line, "Size:", 5) || !strncmp(line, "Rss:", 4) ||
                     !strncmp(line, "Private_Dirty:", 14) || !strncmp(line, "Anonymous:", 10) ||
                     !strncmp(line, "Locked:", 7) || !strncmp(line, "VmFlags:", 8) ||
                     !strncmp(line, "Swap:", 5) || !strncmp(line, "KernelPageSize:", 15)))
            fputs(line, stdout);
    }
    return 0;
}
"""
EXPECTED = b"""\
Size:                  8 kB
KernelPageSize:        4 kB
Rss:                   4 kB
Private_Dirty:         4 kB
Anonymous:             0 kB
Swap:                  0 kB
Locked:                0 kB
VmFlags: rd wr sh mr mw me ms 
Size:                 32 kB
KernelPageSize:        4 kB
Rss:                  12 kB
Private_Dirty:        12 kB
Anonymous:            12 kB
Swap:                  0 kB
Locked:                0 kB
VmFlags: rd wr mr mw me ac 
Size:                 16 kB
KernelPageSize:        4 kB
Rss:                  16 kB
Private_Dirty:        16 kB
Anonymous:            16 kB
Swap:                  0 kB
Locked:               16 kB
VmFlags: rd wr mr mw me lo ac 
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "smaps", PROGRAM, arch=request.param)


def test_smaps_counts_resident_and_locked_pages(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
