"""execve with an empty (or NULL) argv gives the program argc 1 and argv[0] "" (issue 32, LTP
execve06: Linux 5.18+ do_execveat_common; the sandbox started it with argc 0); compared with the
native run. Built by the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv, char **envp) {
    if (argc == 2) {                                  /* the first run: exec itself, no argv */
        char *empty[] = {NULL};
        execve(argv[1], empty, envp);
        return 1;
    }
    printf("argc %d, argv[0] \"%s\", argv[1] %s\n", argc, argc ? argv[0] : "-",
           argc ? (argv[1] ? "set" : "NULL") : "-");
    return 0;
}
"""
EXPECTED = b"argc 1, argv[0] \"\", argv[1] NULL\n"


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "noargs", PROGRAM, arch=request.param)


def test_empty_argv_becomes_one_empty_string(program):
    native = subprocess.run([str(program), str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program), str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
