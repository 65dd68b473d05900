"""process_vm_readv and process_vm_writev between a parent and its forked child (ENOSYS before
issue 32's LTP run): the parent reads the child's buffer and writes into it, and the child
sees the bytes; a C program built by the host's gcc (static; -m32 for i386), run natively for
the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char buffer[64] = "the child's bytes";

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);       /* lines in the order they happen */
    int ready[2], done[2];
    char byte = 0, got[32] = {0}, second[8] = {0};
    if (pipe(ready) || pipe(done)) return 1;
    pid_t child = fork();
    if (child == 0) {
        strcpy(buffer, "written by the child");
        write(ready[1], "r", 1);
        read(done[0], &byte, 1);                /* the parent has written into buffer */
        printf("child sees: %s\n", buffer);
        return 0;
    }
    read(ready[0], &byte, 1);
    struct iovec local[2] = {{got, 10}, {second, 7}}, remote = {buffer, 17};
    ssize_t n = process_vm_readv(child, local, 2, &remote, 1, 0);
    printf("read %zd: %.10s|%.7s\n", n, got, second);
    struct iovec out = {"from the parent", 16}, there = {buffer, 16};
    printf("wrote %zd\n", process_vm_writev(child, &out, 1, &there, 1, 0));
    struct iovec nowhere = {(void *)16, 8};
    printf("unmapped: %zd\n", process_vm_readv(child, local, 1, &nowhere, 1, 0));
    write(done[1], "d", 1);
    waitpid(child, NULL, 0);
    printf("after exit: %zd\n", process_vm_readv(child, local, 1, &remote, 1, 0));
    return 0;
}
"""
EXPECTED = (b"read 17: written by| the ch\nwrote 16\nunmapped: -1\nchild sees: from the parent\n"
            b"after exit: -1\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pvm", PROGRAM, arch=request.param)


def test_parent_reads_and_writes_its_childs_memory(program):
    native = subprocess.run([str(program)], capture_output=True, check=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
