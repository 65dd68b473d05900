"""Key quotas of a user who is not root (issue 32, LTP add_key05: /proc/key-users was missing
and no quota was kept): each key costs its description, its NUL and its payload, a keyring 4
bytes per link charged to its owner (security/keys/key.c key_alloc, key_payload_reserve;
keyring.c __key_link_begin, KEYQUOTA_LINK_BYTES), at most 200 keys and 20 000 bytes (EDQUOT);
/proc/key-users shows the count and the bytes. Also: a key id's possession check no longer
makes the user's keyrings (get_user_session_keyring_rcu finds them only). A C program built by
the host's gcc (static; -m32 for i386): its forked child takes an unused uid and reports the
user's line after each step; run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define UID 23456
static char buf[30000];

static void show(const char *what, long r) {
    char line[200], want[16];
    int keys = -1, bytes = -1, max_keys = -1, max_bytes = -1;
    snprintf(want, sizeof want, "%5u:", UID);
    FILE *f = fopen("/proc/key-users", "r");
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, want, strlen(want)))
            sscanf(line + strlen(want), "%*d %*d/%*d %d/%d %d/%d", &keys, &max_keys, &bytes,
                   &max_bytes);
    fclose(f);
    printf("%-14s %s keys %d/%d bytes %d/%d\n", what, r < 0 ? strerror(errno) : "ok", keys,
           max_keys, bytes, max_bytes);
}

static long add(const char *type, const char *desc, int len, int ring) {
    return syscall(SYS_add_key, type, desc, len ? buf : NULL, len, ring);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (fork() == 0) {
        setuid(UID);
        show("first key", add("user", "first", 64, -1));           /* and the thread keyring */
        show("second key", add("user", "ab", 7, -1));
        show("update", add("user", "ab", 100, -1));                /* in place: +93 */
        long ring = add("keyring", "ring", 0, -1);
        show("keyring", ring);
        long key = add("user", "in ring", 9, ring);
        show("in ring", key);
        show("linked", syscall(SYS_keyctl, 8, key, -1));           /* KEYCTL_LINK: +4 */
        show("too big", add("user", "big", 19900, -1));
        char desc[16];
        long r = 0;
        int n;
        for (n = 0; r >= 0; n++) {
            snprintf(desc, sizeof desc, "k%d", n);
            r = add("user", desc, 1, ring);
        }
        printf("added %d\n", n - 1);
        show("too many", r);
        _exit(0);
    }
    wait(NULL);
    return 0;
}
"""
EXPECTED = """first key      ok keys 2/200 bytes 79/20000
second key     ok keys 3/200 bytes 93/20000
update         ok keys 3/200 bytes 186/20000
keyring        ok keys 4/200 bytes 195/20000
in ring        ok keys 5/200 bytes 216/20000
linked         ok keys 5/200 bytes 220/20000
too big        Disk quota exceeded keys 5/200 bytes 220/20000
added 195
too many       Disk quota exceeded keys 200/200 bytes 2060/20000
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "key_quota", PROGRAM, arch=request.param)


def test_a_users_keys_are_counted_against_its_quota(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
