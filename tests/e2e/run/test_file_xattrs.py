"""Extended attributes of what is no file system's file in the model, as natively (as root) on
both arches: a pipe's, an eventfd's and a socket's inode go through fs/xattr.c's namespace
rules (user.* ENODATA to read, EPERM to write on a non-regular file), have no handlers and no
ACLs (EOPNOTSUPP) and list nothing, except sockfs's system.sockprotoname (the protocol's
name, which nobody sets); /proc lists nothing rather than EOPNOTSUPP; /dev is a tmpfs whose
inodes have attributes (ENODATA, not EOPNOTSUPP). The sandbox answered EOPNOTSUPP to each."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-36s ") + r"""
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/xattr.h>
#include <netinet/in.h>
#include <linux/netlink.h>

static void show(const char *kind, int fd) {
    char what[64], buf[128];
    long r;
#define R(name, call) snprintf(what, sizeof what, "%s %s", kind, name), result(what, call)
    R("list", r = flistxattr(fd, buf, sizeof buf));
    for (long i = 0; i < r; i += strlen(buf + i) + 1)
        printf("  %s\n", buf + i);
    R("list size", flistxattr(fd, NULL, 0));
    R("list too small", flistxattr(fd, buf, 3));
    memset(buf, 0, sizeof buf);
    R("protoname", r = fgetxattr(fd, "system.sockprotoname", buf, sizeof buf));
    if (r > 0)
        printf("  %s\n", buf);
    R("protoname size", fgetxattr(fd, "system.sockprotoname", NULL, 0));
    R("protoname too small", fgetxattr(fd, "system.sockprotoname", buf, 2));
    R("set protoname", fsetxattr(fd, "system.sockprotoname", "X", 2, 0));
    R("remove protoname", fremovexattr(fd, "system.sockprotoname"));
    R("get user", fgetxattr(fd, "user.k", buf, sizeof buf));
    R("set user", fsetxattr(fd, "user.k", "v", 1, 0));
    R("get trusted", fgetxattr(fd, "trusted.k", buf, sizeof buf));
    R("set trusted", fsetxattr(fd, "trusted.k", "v", 1, 0));
    R("get security", fgetxattr(fd, "security.k", buf, sizeof buf));
    R("get acl", fgetxattr(fd, "system.posix_acl_access", buf, sizeof buf));
    R("set acl", fsetxattr(fd, "system.posix_acl_access", "\2\0\0\0", 4, 0));
    R("get other", fgetxattr(fd, "other.k", buf, sizeof buf));
    close(fd);
}

static void path(const char *p) {
    char buf[128];
    printf("== %s\n", p);
    result("list", listxattr(p, buf, sizeof buf));
    result("get user", getxattr(p, "user.k", buf, sizeof buf));
    result("get security", getxattr(p, "security.k", buf, sizeof buf));
    result("get acl", getxattr(p, "system.posix_acl_access", buf, sizeof buf));
    result("get default acl", getxattr(p, "system.posix_acl_default", buf, sizeof buf));
}

int main(void)
{
    int p[2];
    pipe(p);
    show("pipe", p[0]);
    close(p[1]);
    show("eventfd", eventfd(0, 0));
    show("unix stream", socket(AF_UNIX, SOCK_STREAM, 0));
    show("unix dgram", socket(AF_UNIX, SOCK_DGRAM, 0));
    show("unix seqpacket", socket(AF_UNIX, SOCK_SEQPACKET, 0));
    show("tcp", socket(AF_INET, SOCK_STREAM, 0));
    show("udp", socket(AF_INET, SOCK_DGRAM, 0));
    show("tcp6", socket(AF_INET6, SOCK_STREAM, 0));
    show("udp6", socket(AF_INET6, SOCK_DGRAM, 0));
    show("raw", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
    show("raw6", socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
    show("netlink", socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE));
    path("/proc/self/status");
    path("/proc");
    path("/dev/null");
    path("/dev");
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
SHOWN = (("pipe list", "0"), ("pipe get user", "-1 ENODATA"), ("pipe set user", "-1 EPERM"),
         ("pipe get acl", "-1 EOPNOTSUPP"), ("tcp protoname", "4"),
         ("unix stream list", "21"), ("udp set protoname", "-1 EOPNOTSUPP"))


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_pipes_sockets_proc_and_dev_attributes_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"file_xattrs_{arch}", SOURCE, arch=GCC_ARCH[arch])
    result = compare_with_native(program, *(f"{what:<36} {answer}".encode()
                                            for what, answer in SHOWN))
    assert b"== /dev/null\nlist" in result.stdout
