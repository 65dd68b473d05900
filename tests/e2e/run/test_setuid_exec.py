"""execve of a set-user-ID / set-group-ID program makes its owner the effective id (issue 32:
fs/exec.c bprm_fill_uid; the sandbox ignored the bits), and no_new_privs turns that off;
compared with the native run of the same program, which copies itself to a file owned by
65534:65534 with mode 06755 and runs the copy. Built by the host's gcc (static; -m32 for
i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1) {
        printf("%s: uid %d euid %d gid %d egid %d\n", argv[1], getuid(), geteuid(), getgid(),
               getegid());
        return 0;
    }
    char dir[] = "/tmp/setuidXXXXXX", copy[64];
    mkdtemp(dir);
    chmod(dir, 0755);
    snprintf(copy, sizeof copy, "%s/copy", dir);
    int in = open("/proc/self/exe", O_RDONLY), out = open(copy, O_WRONLY | O_CREAT, 0755);
    char buffer[65536];
    ssize_t n;
    while ((n = read(in, buffer, sizeof buffer)) > 0)
        write(out, buffer, n);
    close(in);
    close(out);
    chown(copy, 65534, 65534);
    chmod(copy, 06755);
    fflush(stdout);
    if (fork() == 0) {
        execl(copy, copy, "set-id", NULL);
        _exit(1);
    }
    wait(NULL);
    if (fork() == 0) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        execl(copy, copy, "no_new_privs", NULL);
        _exit(1);
    }
    wait(NULL);
    unlink(copy);
    rmdir(dir);
    return 0;
}
"""
EXPECTED = (b"set-id: uid 0 euid 65534 gid 0 egid 65534\n"
            b"no_new_privs: uid 0 euid 0 gid 0 egid 0\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "setid", PROGRAM, arch=request.param)


def test_set_id_program_runs_as_its_owner(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
