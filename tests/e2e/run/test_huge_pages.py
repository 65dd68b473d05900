"""Huge pages (issue 32, LTP futex_wake04, memfd_create03 and memfd_create04 broke: no
vm.nr_hugepages, drop_caches or compact_memory to write, MFD_HUGETLB EINVAL): a C program
built by the host's gcc (static; -m32 for i386) sizes the pool through vm.nr_hugepages and
reads /proc/meminfo: MAP_HUGETLB with the pool empty (ENOMEM), a 3 MiB shared mapping
rounded to two aligned huge pages ("/anon_hugepage (deleted)"), munmap and mprotect inside a
huge page (EINVAL), a mapping wanting more than is left (ENOMEM), pages back in the pool when
their last mapping goes, a size x86-64 lacks (EINVAL), MAP_HUGETLB of a plain file (EINVAL);
memfd_create with MFD_HUGETLB (EINVAL for size bits alone, ENODEV for 64 KiB), write(2)
EINVAL, shared mappings of its pages and pread, a private mapping's copy, and the write-only
vm.drop_caches and vm.compact_memory. EXPECTED is the program's native output on both arches
(Linux 6.18, checked by hand): the test does not run it natively, as it changes the host's
huge page pool. Linux takes a huge page at the first touch and the model at the mapping, so
the program prints what a new mapping may still reserve (HugePages_Free - HugePages_Rsvd),
which is the same in both."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HP (2UL << 20)
static void result(const char *what, long r) {
    printf("%-34s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "");
}
static long meminfo(const char *key) {
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) v = atol(line + strlen(key));
    fclose(f);
    return v;
}
/* Pages a new mapping may still reserve: free ones less those reserved but not faulted in
   yet (Linux takes a page at the first touch; the model at the mapping) */
static long available(void) { return meminfo("HugePages_Free:") - meminfo("HugePages_Rsvd:"); }
static long put(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    long r = write(fd, text, strlen(text));
    close(fd);
    return r;
}
static void set_pool(long n) {
    char text[32];
    snprintf(text, sizeof text, "%ld", n);
    put("/proc/sys/vm/nr_hugepages", text);
}
static void maps_line(void *at) {
    char line[512], want[32], perms[8], name[256] = "";
    snprintf(want, sizeof want, "%lx-", (unsigned long)at);
    FILE *f = fopen("/proc/self/maps", "r");
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, want, strlen(want))) {
            sscanf(line, "%*s %7s %*s %*s %*s %255[^\n]", perms, name);
            printf("maps: %s %s\n", perms, name);
        }
    fclose(f);
}

int main(void) {
    long hugepagesize = meminfo("Hugepagesize:");
    printf("Hugepagesize %ld kB\n", hugepagesize);
    long total = meminfo("HugePages_Total:"), busy = total - available();
    set_pool(busy);
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
    result("hugetlb map, empty pool", (long)mmap(NULL, HP, PROT_READ | PROT_WRITE, flags, -1, 0));
    set_pool(busy + 2);
    printf("available after growing the pool by 2: %ld\n", available());
    char *p = mmap(NULL, 3 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    printf("3 MiB shared: aligned %d, available now %ld\n", (uintptr_t)p % HP == 0, available());
    maps_line(p);
    p[HP + 5] = 'h';
    result("munmap half a huge page", munmap(p, HP / 2));
    result("mprotect inside a huge page", mprotect(p + 4096, 4096, PROT_READ));
    result("munmap the second page", munmap(p + HP, HP));
    printf("available: %ld\n", available());
    result("map 2 pages with 1 free", (long)mmap(NULL, 2 * HP, PROT_READ, flags, -1, 0));
    result("munmap the first", munmap(p, HP));
    printf("available: %ld\n", available());
    result("MAP_HUGE_16MB", (long)mmap(NULL, HP, PROT_READ, flags | (24 << MAP_HUGE_SHIFT), -1, 0));
    int plain = open("/proc/self/exe", O_RDONLY);
    result("MAP_HUGETLB of a plain file", (long)mmap(NULL, HP, PROT_READ, MAP_PRIVATE | MAP_HUGETLB, plain, 0));

    result("memfd huge bits, no MFD_HUGETLB", syscall(SYS_memfd_create, "x", MFD_HUGE_2MB));
    result("memfd MFD_HUGE_64KB", syscall(SYS_memfd_create, "x", MFD_HUGETLB | MFD_HUGE_64KB));
    int fd = syscall(SYS_memfd_create, "huge", MFD_HUGETLB | MFD_HUGE_2MB);
    result("write to a hugetlb memfd", write(fd, "abc", 3));
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    strcpy(m + 10, "on a huge page");
    struct stat st;
    fstat(fd, &st);
    printf("memfd size after mmap %ld, blksize %ld, available %ld\n", (long)st.st_size,
           (long)st.st_blksize, available());
    char *m2 = mmap(NULL, HP, PROT_READ, MAP_SHARED, fd, 0);
    printf("a second shared mapping reads \"%s\", available %ld\n", m2 + 10, available());
    char buf[32] = {0};
    result("pread", pread(fd, buf, 14, 10));
    printf("pread got \"%s\"\n", buf);
    char *m3 = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    printf("a private mapping reads \"%s\", available %ld\n", m3 + 10, available());
    m3[10] = 'O';
    printf("its write stays its own: \"%s\"\n", m2 + 10);
    munmap(m3, HP); munmap(m2, HP); munmap(m, HP); close(fd);
    printf("all gone, available %ld\n", available());

    result("drop_caches 3", put("/proc/sys/vm/drop_caches", "3"));
    result("compact_memory 1", put("/proc/sys/vm/compact_memory", "1"));
    set_pool(total);
    return 0;
}
"""

EXPECTED = """\
Hugepagesize 2048 kB
hugetlb map, empty pool            -1 ENOMEM
available after growing the pool by 2: 2
3 MiB shared: aligned 1, available now 0
maps: rw-s /anon_hugepage (deleted)
munmap half a huge page            -1 EINVAL
mprotect inside a huge page        -1 EINVAL
munmap the second page             0 
available: 0
map 2 pages with 1 free            -1 ENOMEM
munmap the first                   0 
available: 2
MAP_HUGE_16MB                      -1 EINVAL
MAP_HUGETLB of a plain file        -1 EINVAL
memfd huge bits, no MFD_HUGETLB    -1 EINVAL
memfd MFD_HUGE_64KB                -1 ENODEV
write to a hugetlb memfd           -1 EINVAL
memfd size after mmap 2097152, blksize 2097152, available 1
a second shared mapping reads "on a huge page", available 1
pread                              14 
pread got "on a huge page"
a private mapping reads "on a huge page", available 0
its write stays its own: "on a huge page"
all gone, available 2
drop_caches 3                      1 
compact_memory 1                   1 
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "huge", PROGRAM, arch=request.param)


def test_huge_pages_as_natively(program):
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
