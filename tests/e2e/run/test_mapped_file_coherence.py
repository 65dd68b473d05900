"""read(2) and write(2) of a file meet its MAP_SHARED mappings as Linux's one page cache makes
them (issue 32, LTP msync02: a write(2) after mmap did not show in the mapping, and munmap's
write-back then undid it): a pwrite shows in the mapping, a store through it in a pread, a
child's store in another description's read, a later private map starts from both, and the
write(2) survives munmap. Compared with the native run, both arches (static, -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char page[4096], buf[16] = {0};
    memset(page, 'a', sizeof page);
    int fd = open("coherent", O_RDWR | O_CREAT | O_TRUNC, 0600);
    write(fd, page, sizeof page);
    char *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    pwrite(fd, "Testing", 7, 100);
    printf("the mapping after write(2): %.9s\n", map + 99);
    memcpy(map + 200, "stored", 6);
    pread(fd, buf, 8, 199);
    printf("pread after a store: %s\n", buf);
    int other = open("coherent", O_RDONLY);
    lseek(other, 300, SEEK_SET);
    if (fork() == 0) {
        memcpy(map + 300, "child", 5);
        _exit(0);
    }
    wait(NULL);
    memset(buf, 0, sizeof buf);
    read(other, buf, 6);
    printf("read(2) of the child's store by another fd: %s\n", buf);
    char *priv = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    printf("a private map: %.7s %.6s\n", priv + 100, priv + 200);
    munmap(map, 4096);
    memset(buf, 0, sizeof buf);
    pread(fd, buf, 7, 100);
    printf("after munmap: %s\n", buf);
    unlink("coherent");
    return 0;
}
"""
EXPECTED = b"""\
the mapping after write(2): aTestinga
pread after a store: astoreda
read(2) of the child's store by another fd: childa
a private map: Testing stored
after munmap: Testing
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "coherent", PROGRAM, arch=request.param)


def test_file_io_and_shared_mappings_see_each_other(program, tmp_path):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60,
                            cwd=tmp_path)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
