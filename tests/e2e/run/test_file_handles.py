"""name_to_handle_at and open_by_handle_at (issue 32, LTP name_to_handle_at01/02,
open_by_handle_at01/02: ENOSYS): tmpfs's handles (type 1, 12 bytes), EOVERFLOW with the size
needed and FILEID_INVALID for a buffer too small, EINVAL for unknown flags or a size of 0 or
above 128, a symlink's own handle (ELOOP when opened) or its target's with
AT_SYMLINK_FOLLOW, AT_EMPTY_PATH on an fd, EBADF for a bad mount fd (fs/fhandle.c). Compared
with the native run in /dev/shm (tmpfs natively, the shm mount in the sandbox); built by the
host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-24s ", shown="r > 2 ? 3L : r") + r"""

int main(void) {
    char dir[] = "/dev/shm/fhXXXXXX", path[64], link[64];
    mkdtemp(dir);
    chdir(dir);              /* open_by_handle_at(AT_FDCWD) decodes on the cwd's mount */
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    write(fd, "handle", 6);
    result("symlink", symlink("file", link));
    struct file_handle *h = calloc(1, sizeof *h + 128);
    int mount_id;
    h->handle_bytes = 0;
    result("size 0", name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0));
    printf("needed %u type %d\n", h->handle_bytes, h->handle_type);
    result("bad flags", name_to_handle_at(AT_FDCWD, path, h, &mount_id, -1));
    h->handle_bytes = 129;
    result("size 129", name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0));
    h->handle_bytes = 128;
    result("file", name_to_handle_at(AT_FDCWD, path, h, &mount_id, 0));
    printf("bytes %u type %d\n", h->handle_bytes, h->handle_type);
    int again = open_by_handle_at(AT_FDCWD, h, O_RDONLY);
    result("open_by_handle_at", again);
    char text[8] = {0};
    pread(again, text, 6, 0);
    printf("text %s\n", text);
    struct file_handle *l = calloc(1, sizeof *l + 128);
    l->handle_bytes = 128;
    result("symlink itself", name_to_handle_at(AT_FDCWD, link, l, &mount_id, 0));
    result("open the symlink", open_by_handle_at(AT_FDCWD, l, O_RDWR));
    l->handle_bytes = 128;
    result("followed", name_to_handle_at(AT_FDCWD, link, l, &mount_id, AT_SYMLINK_FOLLOW));
    result("empty path fd", name_to_handle_at(fd, "", l, &mount_id, AT_EMPTY_PATH));
    result("no such file", name_to_handle_at(AT_FDCWD, "/dev/shm/nothing", l, &mount_id, 0));
    h->handle_bytes = 0;
    result("open size 0", open_by_handle_at(AT_FDCWD, h, O_RDONLY));
    h->handle_bytes = 12;
    result("bad mount fd", open_by_handle_at(99, h, O_RDONLY));
    close(fd);
    unlink(path);
    unlink(link);
    result("unlinked, still open", open_by_handle_at(AT_FDCWD, h, O_RDONLY));
    chdir("/");
    rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "file_handles", PROGRAM, arch=request.param)


def test_file_handles_as_natively(program):
    compare_with_native(program, b"bytes 12 type 1", b"text handle")
