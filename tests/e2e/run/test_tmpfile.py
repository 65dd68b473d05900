"""O_TMPFILE (issue 32, LTP openat03: EOPNOTSUPP before, "O_TMPFILE not supported"): an
unnamed file in a directory, named later by linkat(2) through /proc/self/fd/N with
AT_SYMLINK_FOLLOW or through its fd with AT_EMPTY_PATH, never with O_EXCL; the flag checks of
fs/open.c build_open_flags and O_PATH's stripping of the other flags (build_open_how: O_PATH
with O_CREAT made a file, O_PATH with O_TMPFILE a temporary file). Compared with the native
run of the same program in a tmpfs (/dev/shm); inode numbers after '#' are masked. Built by
the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%s: ") + r"""
#include <dirent.h>

static char dir[] = "/dev/shm/tmpfileXXXXXX";

static void link_of(int fd) {
    char proc[64], text[256], masked[256];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, text, sizeof text - 1);
    text[n > 0 ? n : 0] = 0;
    const char *hash = strchr(text, '#');
    if (hash) {   /* the inode number differs: keep the text around it */
        size_t at = hash - text;
        memcpy(masked, text, at + 1);
        masked[at + 1] = 0;
        strcat(masked, "INO");
        strcat(masked, hash + 1 + strspn(hash + 1, "0123456789"));
    } else {
        strcpy(masked, text);
    }
    printf("fd %d -> %s\n", fd, masked + strlen(dir));
}

static int visible(const struct dirent *e) {
    return e->d_name[0] != '.';
}

static void names(void) {   /* sorted: tmpfs lists the newest first, the overlay by name */
    struct dirent **list;
    int count = scandir(dir, &list, visible, alphasort);
    for (int i = 0; i < count; i++)
        printf(" %s", list[i]->d_name);
    printf(" (%d names)\n", count);
}

static long nlink(int fd) {
    struct stat st;
    fstat(fd, &st);
    return (long)st.st_nlink;
}

int main(void) {
    char path[128], proc[64];
    mkdtemp(dir);
    int fd = open(dir, O_TMPFILE | O_RDWR, 0640);
    result("open O_TMPFILE", fd);
    result("write", write(fd, "hello", 5));
    struct stat st;
    fstat(fd, &st);
    printf("nlink %ld mode %o size %ld\n", nlink(fd), st.st_mode, (long)st.st_size);
    link_of(fd);
    names();
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    snprintf(path, sizeof path, "%s/named", dir);
    result("linkat /proc/self/fd/N", linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW));
    printf("nlink %ld\n", nlink(fd));
    link_of(fd);
    names();
    char text[16] = {0};
    int again = open(path, O_RDONLY);
    result("read named", read(again, text, sizeof text - 1));
    printf("text %s\n", text);

    int excl = open(dir, O_TMPFILE | O_WRONLY | O_EXCL, 0600);
    snprintf(path, sizeof path, "%s/excl", dir);
    result("linkat O_EXCL", linkat(excl, "", AT_FDCWD, path, AT_EMPTY_PATH));
    int other = open(dir, O_TMPFILE | O_RDWR, 0600);
    snprintf(path, sizeof path, "%s/empty_path", dir);
    result("linkat bad flag", linkat(other, "", AT_FDCWD, path, 2));
    result("linkat no AT_EMPTY_PATH", linkat(other, "", AT_FDCWD, path, 0));
    result("linkat AT_EMPTY_PATH", linkat(other, "", AT_FDCWD, path, AT_EMPTY_PATH));
    names();

    int gone = open(dir, O_TMPFILE | O_RDWR, 0600);
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", gone);
    result("write gone", write(gone, "abc", 3));
    int reopened = open(proc, O_RDONLY);   /* a new description of the inode, at offset 0 */
    printf("offsets %ld %ld\n", (long)lseek(gone, 0, SEEK_CUR), (long)lseek(reopened, 0, SEEK_CUR));
    memset(text, 0, sizeof text);
    result("read reopened", read(reopened, text, sizeof text - 1));
    printf("text %s\n", text);

    result("O_RDONLY", open(dir, O_TMPFILE | O_RDONLY, 0600));
    result("O_RDONLY|O_TRUNC", open(dir, O_TMPFILE | O_RDONLY | O_TRUNC, 0600));
    result("O_CREAT", open(dir, O_TMPFILE | O_CREAT | O_RDWR, 0600));
    snprintf(path, sizeof path, "%s/named", dir);
    result("a file", open(path, O_TMPFILE | O_RDWR, 0600));
    snprintf(path, sizeof path, "%s/nothing", dir);
    result("nothing", open(path, O_TMPFILE | O_RDWR, 0600));
    result("/proc", open("/proc", O_TMPFILE | O_RDWR, 0600));
    int opath = open(dir, O_TMPFILE | O_RDWR | O_PATH, 0600);
    printf("O_PATH|O_TMPFILE: F_GETFL %o\n", fcntl(opath, F_GETFL));
    snprintf(path, sizeof path, "%s/created", dir);
    result("O_PATH|O_CREAT", open(path, O_PATH | O_CREAT | O_RDWR, 0600));
    names();

    for (const char *n = "named\0empty_path\0"; *n; n += strlen(n) + 1) {
        snprintf(path, sizeof path, "%s/%s", dir, n);
        unlink(path);
    }
    result("rmdir", rmdir(dir));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "tmpfile", PROGRAM, arch=request.param)


def test_tmpfile_as_natively(program):
    compare_with_native(program, b"open O_TMPFILE: 3", b"#INO (deleted)")
