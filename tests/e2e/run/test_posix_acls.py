"""POSIX ACLs as extended attributes (system.posix_acl_access, system.posix_acl_default) on a
tmpfs (/dev/shm) and an ext4 (/tmp) file, as natively (as root) on both arches: ENODATA for a
file without one (the sandbox answered EOPNOTSUPP, so Debian's `ls -l` stopped asking after the
first file), an ACL set and read back and listed, the mode it sets, a chmod written back into
it, an ACL the mode says all of not kept, who may open a file its ACL names (and who not), the malformed blobs' EINVAL/EOPNOTSUPP, a default
ACL on a file, a symlink's EOPNOTSUPP, a non-owner's EPERM, and the namespace rules of
fs/xattr.c xattr_permission for trusted.* and user.* beside them."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%-34s ") + r"""
#include <grp.h>
#include <stdint.h>
#include <sys/xattr.h>
#include <sys/wait.h>

#define ACCESS "system.posix_acl_access"
#define DEFAULT "system.posix_acl_default"

static char dir[64], file[80], sub[80], link_[80], fifo[80];

static void show_mode(const char *what, const char *path);

/* an ACL blob: the version, then (tag, perm, id) triples; size is its length in bytes */
static size_t blob(unsigned char *out, uint32_t version, const uint32_t *e, int n) {
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

static void show_value(const char *what, const char *path, const char *name) {
    unsigned char buf[256];
    long r = lgetxattr(path, name, buf, sizeof buf);
    result(what, r);
    if (r > 0) {
        for (long i = 0; i < r; i++)
            printf("%02x", buf[i]);
        printf("\n");
    }
}

static void show_list(const char *what, const char *path) {
    char buf[512];
    long r = llistxattr(path, buf, sizeof buf);
    result(what, r);
    for (long i = 0; i < r; i += strlen(buf + i) + 1)
        printf("  %s\n", buf + i);
}

static void show_mode(const char *what, const char *path) {
    struct stat st;
    lstat(path, &st);
    printf("%-34s %o\n", what, st.st_mode & 07777);
}

#define U1000 1000
static const uint32_t EXTENDED[] = {1, 6, -1, 2, 4, U1000, 4, 4, -1, 0x10, 5, -1, 0x20, 0, -1};
static const uint32_t MINIMAL[] = {1, 7, -1, 4, 5, -1, 0x20, 0, -1};
static const uint32_t UNORDERED[] = {4, 4, -1, 1, 6, -1, 0x20, 0, -1};
static const uint32_t NO_MASK[] = {1, 6, -1, 2, 4, U1000, 4, 4, -1, 0x20, 0, -1};
static const uint32_t BAD_TAG[] = {1, 6, -1, 0x40, 4, -1, 4, 4, -1, 0x20, 0, -1};
static const uint32_t BAD_PERM[] = {1, 8, -1, 4, 4, -1, 0x20, 0, -1};
static const uint32_t NOBODY_ID[] = {1, 6, -1, 2, 4, -1, 4, 4, -1, 0x10, 4, -1, 0x20, 0, -1};

/* who may open what an ACL says: a named user, a named group, a named user the mode's
   other bits would have let in, a mask */
static const uint32_t USER_R[] = {1, 6, -1, 2, 4, 65534, 4, 0, -1, 0x10, 4, -1, 0x20, 0, -1};
static const uint32_t GROUP_R[] = {1, 6, -1, 4, 0, -1, 8, 4, 65534, 0x10, 4, -1, 0x20, 0, -1};
static const uint32_t USER_NONE[] = {1, 6, -1, 2, 0, 65534, 4, 4, -1, 0x10, 4, -1, 0x20, 4, -1};
static const uint32_t USER_RW_MASK_R[] = {1, 6, -1, 2, 6, 65534, 4, 0, -1, 0x10, 4, -1,
                                          0x20, 0, -1};

static long opened(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd >= 0)
        close(fd);
    return fd < 0 ? -1 : 0;
}

static void enforced(unsigned char *b) {
    static const uint32_t *acls[] = {USER_R, GROUP_R, USER_NONE, USER_RW_MASK_R};
    static const char *names[] = {"user r", "group r", "user none", "user rw mask r"};
    char paths[4][96], what[64];
    for (int i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/enforced%d", dir, i);
        close(open(paths[i], O_CREAT | O_WRONLY, 0644));
        size_t n = blob(b, 2, acls[i], 5);
        snprintf(what, sizeof what, "set %s", names[i]);
        result(what, setxattr(paths[i], ACCESS, b, n, 0));
        snprintf(what, sizeof what, "mode %s", names[i]);
        show_mode(what, paths[i]);
    }
    fflush(stdout);
    if (fork() == 0) {          /* nobody, group nogroup, no other group */
        setgroups(0, NULL);
        setgid(65534);
        setuid(65534);
        for (int i = 0; i < 4; i++) {
            snprintf(what, sizeof what, "nobody reads %s", names[i]);
            result(what, opened(paths[i], O_RDONLY));
            snprintf(what, sizeof what, "nobody writes %s", names[i]);
            result(what, opened(paths[i], O_WRONLY));
        }
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    result("chmod 0600 user r", chmod(paths[0], 0600));
    fflush(stdout);
    if (fork() == 0) {
        setgroups(0, NULL);
        setgid(65534);
        setuid(65534);
        result("nobody reads after chmod", opened(paths[0], O_RDONLY));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    for (int i = 0; i < 4; i++)
        unlink(paths[i]);
}

static void in_dir(const char *base) {
    unsigned char b[256];
    size_t n;
    strcpy(dir, base);
    strcat(dir, "/aclXXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(1); }
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(link_, sizeof link_, "%s/link", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    printf("== %s\n", base);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    mkdir(sub, 0755);
    symlink("file", link_);
    mkfifo(fifo, 0644);
    chmod(dir, 0755);                   /* mkdtemp's 0700: nobody must reach the files */
    result("file access absent", getxattr(file, ACCESS, NULL, 0));
    result("file default absent", getxattr(file, DEFAULT, NULL, 0));
    result("dir default absent", getxattr(sub, DEFAULT, NULL, 0));
    result("fifo access absent", getxattr(fifo, ACCESS, NULL, 0));
    result("symlink access", lgetxattr(link_, ACCESS, NULL, 0));
    result("through symlink access", getxattr(link_, ACCESS, NULL, 0));
    result("other system name", getxattr(file, "system.nfs4_acl", NULL, 0));
    show_list("list without acl", file);

    n = blob(b, 2, EXTENDED, 5);
    result("set extended", setxattr(file, ACCESS, b, n, 0));
    show_mode("mode after extended", file);
    show_value("get extended", file, ACCESS);
    result("get too small", getxattr(file, ACCESS, b, 8));
    show_list("list with acl", file);
    result("set again with XATTR_CREATE", setxattr(file, ACCESS, b, n, XATTR_CREATE));
    result("chmod 0604", chmod(file, 0604));
    show_value("get after chmod", file, ACCESS);
    show_mode("mode after chmod", file);
    n = blob(b, 2, MINIMAL, 3);
    result("set minimal", setxattr(file, ACCESS, b, n, 0));
    show_mode("mode after minimal", file);
    result("get after minimal", getxattr(file, ACCESS, NULL, 0));
    n = blob(b, 2, EXTENDED, 5);
    setxattr(file, ACCESS, b, n, 0);
    result("remove", removexattr(file, ACCESS));
    result("get after remove", getxattr(file, ACCESS, NULL, 0));
    result("remove again", removexattr(file, ACCESS));
    setxattr(file, ACCESS, b, n, 0);
    result("set header alone", setxattr(file, ACCESS, b, 4, 0));
    result("get after header alone", getxattr(file, ACCESS, NULL, 0));
    setxattr(file, ACCESS, b, n, 0);
    result("set empty", setxattr(file, ACCESS, b, 0, 0));
    result("get after empty", getxattr(file, ACCESS, NULL, 0));

    result("set 2 bytes", setxattr(file, ACCESS, b, 2, 0));
    n = blob(b, 1, MINIMAL, 3);
    result("set version 1", setxattr(file, ACCESS, b, n, 0));
    n = blob(b, 2, MINIMAL, 3);
    result("set partial entry", setxattr(file, ACCESS, b, n - 3, 0));
    n = blob(b, 2, UNORDERED, 3);
    result("set unordered", setxattr(file, ACCESS, b, n, 0));
    n = blob(b, 2, NO_MASK, 4);
    result("set named without mask", setxattr(file, ACCESS, b, n, 0));
    n = blob(b, 2, BAD_TAG, 4);
    result("set unknown tag", setxattr(file, ACCESS, b, n, 0));
    n = blob(b, 2, BAD_PERM, 3);
    result("set perm 8", setxattr(file, ACCESS, b, n, 0));
    n = blob(b, 2, NOBODY_ID, 5);
    result("set user id -1", setxattr(file, ACCESS, b, n, 0));
    show_mode("mode after refusals", file);

    n = blob(b, 2, MINIMAL, 3);
    result("file set default", setxattr(file, DEFAULT, b, n, 0));
    result("file remove default", removexattr(file, DEFAULT));
    result("dir set default", setxattr(sub, DEFAULT, b, n, 0));
    show_value("dir get default", sub, DEFAULT);
    n = blob(b, 2, EXTENDED, 5);
    result("dir set access", setxattr(sub, ACCESS, b, n, 0));
    show_list("dir list", sub);
    show_mode("dir mode", sub);
    result("fifo set access", setxattr(fifo, ACCESS, b, n, 0));
    show_value("fifo get access", fifo, ACCESS);
    result("symlink set access", lsetxattr(link_, ACCESS, b, n, 0));
    result("symlink set user", lsetxattr(link_, "user.k", "v", 1, 0));
    result("fifo set user", setxattr(fifo, "user.k", "v", 1, 0));
    result("fifo get user", getxattr(fifo, "user.k", NULL, 0));
    fflush(stdout);
    if (fork() == 0) {          /* neither the owner nor CAP_SYS_ADMIN */
        setuid(65534);
        result("nobody get access", getxattr(sub, ACCESS, NULL, 0));
        result("nobody set access", setxattr(file, ACCESS, b, n, 0));
        result("nobody remove access", removexattr(sub, ACCESS));
        result("nobody set trusted", setxattr(file, "trusted.k", "v", 1, 0));
        result("nobody get trusted", getxattr(file, "trusted.k", NULL, 0));
        result("nobody set user", setxattr(file, "user.k", "v", 1, 0));
        result("nobody set security", setxattr(file, "security.k", "v", 1, 0));
        fflush(stdout);
        _exit(0);
    }
    wait(NULL);
    enforced(b);
    unlink(fifo); unlink(link_); rmdir(sub); unlink(file);
    result("cleaned up", rmdir(dir));
}

int main(void)
{
    in_dir("/dev/shm");
    in_dir("/tmp");
    return 0;
}
"""

GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
# the cases the native run must reach: ENODATA without an ACL, one kept and one not, the
# refusals
SHOWN = (("file access absent", "-1 ENODATA"), ("symlink access", "-1 EOPNOTSUPP"),
         ("set extended", "0"), ("get extended", "44"), ("get after minimal", "-1 ENODATA"),
         ("set version 1", "-1 EOPNOTSUPP"), ("set unordered", "-1 EINVAL"),
         ("file set default", "-1 EACCES"), ("nobody set access", "-1 EPERM"),
         ("nobody set trusted", "-1 EPERM"), ("nobody get trusted", "-1 ENODATA"),
         ("nobody reads user r", "0"), ("nobody reads group r", "0"),
         ("nobody reads user none", "-1 EACCES"), ("nobody writes user rw mask r", "-1 EACCES"),
         ("nobody reads after chmod", "-1 EACCES"))


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_posix_acl_attributes_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"posix_acls_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *(f"{what:<34} {answer}".encode() for what, answer in SHOWN))
