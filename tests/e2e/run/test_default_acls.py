"""A directory's default ACL is inherited at creation (fs/posix_acl.c posix_acl_create): a file,
fifo, device, socket, O_TMPFILE file or directory made in it gets the default ACL as its access
ACL, masked by the mode asked (posix_acl_create_masq), and a directory gets it as its default
too; the umask does not apply then. The sandbox applied the umask and gave no ACL (ENODATA).
Natively as root and in the sandbox on both arches, on /dev/shm (tmpfs) and /tmp (ext4),
byte-identical: modes, the ACLs read back, listxattr's order, a nested directory, a minimal
default ACL (no access ACL kept, the umask still ignored), a symlink (none), a directory
without a default ACL (the umask), and a chmod of an inherited ACL."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-30s ") + r"""
#include <stdint.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>

#define ACCESS "system.posix_acl_access"
#define DEFAULT "system.posix_acl_default"

static char dir[64];

static size_t blob(unsigned char *out, const uint32_t *e, int n) {
    uint32_t version = 2;
    memcpy(out, &version, 4);
    for (int i = 0; i < n; i++) {
        uint16_t tag = e[3 * i], perm = e[3 * i + 1];
        uint32_t id = e[3 * i + 2];
        memcpy(out + 4 + 8 * i, &tag, 2);
        memcpy(out + 6 + 8 * i, &perm, 2);
        memcpy(out + 8 + 8 * i, &id, 4);
    }
    return 4 + 8 * n;
}

static const char *at(const char *name) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* the mode, each ACL as hex (or its errno) and listxattr's names */
static void show(const char *name) {
    const char *path = at(name);
    struct stat st;
    unsigned char buf[256];
    char what[64];
    lstat(path, &st);
    printf("%-30s %o\n", name, st.st_mode);
    for (int i = 0; i < 2; i++) {
        snprintf(what, sizeof what, "  %s", i ? "default" : "access");
        long r = lgetxattr(path, i ? DEFAULT : ACCESS, buf, sizeof buf);
        result(what, r);
        if (r > 0) {
            printf("   ");
            for (long j = 0; j < r; j++)
                printf("%02x", buf[j]);
            printf("\n");
        }
    }
    char list[512];
    long r = llistxattr(path, list, sizeof list);
    for (long i = 0; i < r; i += strlen(list + i) + 1)
        printf("  listed %s\n", list + i);
}

/* u::rwx u:1000:r-x g::rwx m::r-x o::--x */
static const uint32_t NAMED[] = {1, 7, -1, 2, 5, 1000, 4, 7, -1, 0x10, 5, -1, 0x20, 1, -1};
/* u::rwx g::rwx o::rwx: says no more than a mode */
static const uint32_t MINIMAL[] = {1, 7, -1, 4, 7, -1, 0x20, 7, -1};
/* u::rw- g::r-x o::r--, no mask: the group entry meets the mode's group bits */
static const uint32_t NO_MASK[] = {1, 6, -1, 4, 5, -1, 0x20, 4, -1};

static void in_dir(const char *base) {
    unsigned char b[128];
    snprintf(dir, sizeof dir, "%s/default_acls", base);
    mkdir(dir, 0755);
    result("set default", setxattr(dir, DEFAULT, b, blob(b, NAMED, 5), 0));
    close(open(at("file666"), O_CREAT | O_WRONLY, 0666));
    show("file666");
    close(open(at("file600"), O_CREAT | O_WRONLY, 0600));
    show("file600");
    close(open(at("file4755"), O_CREAT | O_WRONLY, 04755));
    show("file4755");
    result("mkdir", mkdir(at("sub"), 0777));
    show("sub");
    result("mkdir 0750", mkdir(at("sub750"), 0750));
    show("sub750");
    close(open(at("sub/nested"), O_CREAT | O_WRONLY, 0777));
    show("sub/nested");
    result("mknod fifo", mknod(at("fifo"), S_IFIFO | 0666, 0));
    show("fifo");
    result("mknod regular", mknod(at("regular"), 0640, 0));
    show("regular");
    result("mknod char", mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)));
    show("null");
    result("symlink", symlink("file666", at("link")));
    show("link");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", at("sock"));
    result("bind", bind(s, (struct sockaddr *)&sun, sizeof sun));
    close(s);
    show("sock");
    int fd = open(dir, O_TMPFILE | O_WRONLY, 0666);
    struct stat st;
    fstat(fd, &st);
    printf("%-30s %o\n", "tmpfile", st.st_mode);
    unsigned char buf[256];
    result("  tmpfile access", fgetxattr(fd, ACCESS, buf, sizeof buf));
    close(fd);
    result("chmod file666 0604", chmod(at("file666"), 0604));
    show("file666");

    result("set minimal default", setxattr(dir, DEFAULT, b, blob(b, MINIMAL, 3), 0));
    close(open(at("minimal"), O_CREAT | O_WRONLY, 0666));
    show("minimal");
    result("mkdir minimal", mkdir(at("minimal_dir"), 0777));
    show("minimal_dir");
    result("set default without mask", setxattr(dir, DEFAULT, b, blob(b, NO_MASK, 3), 0));
    close(open(at("no_mask"), O_CREAT | O_WRONLY, 0777));
    show("no_mask");
    result("remove default", removexattr(dir, DEFAULT));
    close(open(at("plain"), O_CREAT | O_WRONLY, 0666));
    show("plain");
    result("mkdir plain", mkdir(at("plain_dir"), 0777));
    show("plain_dir");

    const char *names[] = {"file666", "file600", "file4755", "sub/nested", "fifo", "regular",
                           "null", "link", "sock", "minimal", "no_mask", "plain"};
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++)
        unlink(at(names[i]));
    const char *dirs[] = {"sub", "sub750", "minimal_dir", "plain_dir"};
    for (unsigned i = 0; i < sizeof dirs / sizeof *dirs; i++)
        rmdir(at(dirs[i]));
    result("cleaned up", rmdir(dir));
}

int main(void)
{
    umask(022);
    in_dir("/dev/shm");
    in_dir("/tmp");
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
# the cases the native run must reach: the inherited modes (no umask) and ACLs
SHOWN = (b"file666                        100640", b"sub                            40751",
         b"minimal                        100666", b"no_mask                        100654",
         b"plain                          100644", b"link                           120777",
         b"tmpfile                        100640", b"cleaned up                     0")


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_default_acls_inherited_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"default_acls_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *SHOWN)
