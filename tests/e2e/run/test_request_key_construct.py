"""request_key with callout information and no key found (issue 32, LTP keyctl07, request_key04:
ENOKEY before, no key made): Linux makes the key in the destination keyring and runs
/sbin/request-key; the sandbox answers as a system without it: the upcall fails with ENOENT and
the key stays negative for 60 s (KEYCTL_READ and a second request ENOKEY), and a default
destination the caller may not write is EACCES with nothing added (security/keys/request_key.c
construct_get_dest_keyring, construct_key_and_link). A C program built by the host's gcc
(static; -m32 for i386), run natively for the reference (the host has no /sbin/request-key)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long keyctl(int op, long a, long b, long c) { return syscall(SYS_keyctl, op, a, b, c, 0); }
static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int id = 0;
    char buf[64];
    show("join", keyctl(1, 0, 0, 0));                            /* a new session keyring */
    show("no callout", syscall(SYS_request_key, "user", "desc1", NULL, -2));
    show("callout", syscall(SYS_request_key, "user", "desc1", "info", -2));
    long n = keyctl(11, -2, (long)&id, sizeof id);               /* KEYCTL_READ the process keyring */
    printf("process keyring holds %ld bytes, a key %d\n", n, id != 0);
    show("read the negative key", keyctl(11, id, (long)buf, sizeof buf));
    show("request it again", syscall(SYS_request_key, "user", "desc1", "info", -2));
    show("describe", keyctl(6, id, (long)buf, sizeof buf));
    keyctl(5, -3, 0x0b000000, 0);                                 /* SETPERM session: pos search|read|view */
    keyctl(14, 3, 0, 0);                                         /* SET_REQKEY_KEYRING: session */
    show("default session without write", syscall(SYS_request_key, "user", "desc2", "info", 0));
    n = keyctl(11, -3, (long)&id, sizeof id);
    printf("session keyring holds %ld bytes\n", n);
    return 0;
}
"""
EXPECTED = """join: ok
no callout: Required key not available
callout: No such file or directory
process keyring holds 4 bytes, a key 1
read the negative key: Required key not available
request it again: Required key not available
describe: ok
default session without write: Permission denied
session keyring holds 0 bytes
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "request_key", PROGRAM, arch=request.param)


def test_a_key_that_cannot_be_constructed_is_negative(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
