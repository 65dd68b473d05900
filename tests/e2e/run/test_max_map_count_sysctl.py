"""/proc/sys/vm/max_map_count is root's to set (kernel/sysctl.c vm_table: mode 0644,
proc_dointvec_minmax from 0), as LTP's save_restore does before munmap04 runs (it failed
in set-up with EACCES: the sandbox's /proc/sys was read-only). A write that is no integer
or is negative is EINVAL (both checked natively with the host's own value, which is left as
it was); a value written is read back and obeyed by mmap at once, by the writer and by a
child forked after. Sandbox only: natively the program would change the host's limit."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PATH "/proc/sys/vm/max_map_count"

static void show(void) {
    char text[32] = {0};
    int fd = open(PATH, O_RDONLY);
    read(fd, text, sizeof text - 1);
    close(fd);
    printf("reads %s", text);
}

static void put(const char *value) {
    int fd = open(PATH, O_WRONLY | O_TRUNC);
    errno = 0;
    long n = write(fd, value, strlen(value));
    printf("write \"%s\": %ld errno %d\n", value, n, n < 0 ? errno : 0);
    close(fd);
}

static int map_until_refused(void) {
    int made = 0;
    while (mmap(NULL, 4096, made % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0) != MAP_FAILED)
        made++;
    return errno == ENOMEM && made < 200 ? 1 : 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    show();
    put("abc");
    put("-1");
    put("200");
    show();
    printf("mmap refused with ENOMEM below 200 areas: %d\n", map_until_refused());
    if (fork() == 0) {
        printf("child: %d\n", mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
               == MAP_FAILED && errno == ENOMEM);
        _exit(0);
    }
    wait(NULL);
    put("65530\n");
    printf("mmap after: %d\n",
           mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED);
    return 0;
}
"""
EXPECTED = b"""\
reads 65530
write "abc": -1 errno 22
write "-1": -1 errno 22
write "200": 3 errno 0
reads 200
mmap refused with ENOMEM below 200 areas: 1
child: 1
write "65530
": 6 errno 0
mmap after: 1
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_root_sets_max_map_count_and_mmap_obeys(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, "map_count", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
