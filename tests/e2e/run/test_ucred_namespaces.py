"""SO_PEERCRED and SCM_CREDENTIALS in the reader's namespaces (net/core/scm.c scm_recv:
pid_vnr and from_kuid_munged; net/core/sock.c cred_to_ucred): a child in a new pid and user
namespace (no maps) receives its parent's credentials as pid 0 (outside its namespace) and
uid/gid 65534, and reads its own connection's peer as pid 1; the parent reads the child's
real ids. Before, both showed the global pid and kernel ids. A C program (static; -m32 for
i386), run natively for the reference (as root)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
/* SO_PEERCRED and SCM_CREDENTIALS across pid and user namespaces */
static void peer(const char *who, int s) {
    struct ucred c; socklen_t len = sizeof c;
    getsockopt(s, SOL_SOCKET, SO_PEERCRED, &c, &len);
    printf("%s: peer pid %s uid %u gid %u\n", who, c.pid == 0 ? "0" : c.pid == 1 ? "1" : c.pid == 2 ? "2" : "other", c.uid, c.gid);
}
static void received(const char *who, int s) {
    char byte, control[CMSG_SPACE(sizeof(struct ucred))];
    struct iovec iov = { &byte, 1 };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
    recvmsg(s, &m, 0);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    struct ucred u; memcpy(&u, CMSG_DATA(c), sizeof u);
    printf("%s: sender pid %s uid %u gid %u\n", who, u.pid == 0 ? "0" : u.pid == 1 ? "1" : "other", u.uid, u.gid);
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    int on = 1;
    setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    unshare(CLONE_NEWPID);
    pid_t child = fork();
    if (child == 0) {
        unshare(CLONE_NEWUSER);            /* no maps: every id is 65534 here */
        write(sv[1], "x", 1);
        received("child", sv[1]);
        int l = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "\0trapline-ucred" };
        socklen_t alen = sizeof(sa_family_t) + 15;
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        bind(l, (struct sockaddr *)&a, alen); listen(l, 1);
        connect(c, (struct sockaddr *)&a, alen);
        int s = accept(l, NULL, NULL);
        peer("child, itself", s);
        _exit(0);
    }
    received("parent", sv[0]);
    write(sv[0], "x", 1);
    waitpid(child, NULL, 0);
    return 0;
}
"""
EXPECTED = """parent: sender pid other uid 0 gid 0
child: sender pid 0 uid 65534 gid 65534
child, itself: peer pid 1 uid 65534 gid 65534
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "ucred_ns", PROGRAM, arch=request.param)


def test_credentials_read_in_the_readers_namespaces(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
