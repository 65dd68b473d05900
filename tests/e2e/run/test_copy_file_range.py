"""copy_file_range(2) (issue 32, LTP copy_file_range03: ENOSYS): bytes between regular files
at offsets given by pointer (written back advanced) or at the file positions (which move), cut
at the input's end, and fs/read_write.c's refusals: flags, a bad fd, a directory, a pipe, an
output not writable or O_APPEND, overlapping ranges of one file, a negative offset. Compared
with the native run; built by the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
int main(void) {
    char dir[] = "/tmp/cfrXXXXXX", a[64], b[64];
    mkdtemp(dir);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    int in = open(a, O_RDWR | O_CREAT, 0644), out = open(b, O_RDWR | O_CREAT, 0644);
    write(in, "hello, copy_file_range", 22);
    loff_t off_in = 7, off_out = 0;
    result("copy 100 from 7", copy_file_range(in, &off_in, out, &off_out, 100, 0));
    printf("offsets %ld %ld, positions %ld %ld\n", (long)off_in, (long)off_out,
           (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
    lseek(in, 0, SEEK_SET);
    result("copy 5 at positions", copy_file_range(in, NULL, out, NULL, 5, 0));
    printf("positions %ld %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
    char text[64] = {0};
    pread(out, text, 63, 0);
    printf("out: %s\n", text);
    result("past the end", copy_file_range(in, &(loff_t){100}, out, NULL, 5, 0));
    result("flags 1", copy_file_range(in, NULL, out, NULL, 5, 1));
    result("bad fd", copy_file_range(99, NULL, out, NULL, 5, 0));
    int dirfd = open(dir, O_RDONLY);
    result("a directory", copy_file_range(dirfd, NULL, out, NULL, 5, 0));
    int p[2];
    pipe(p);
    result("a pipe", copy_file_range(p[0], NULL, out, NULL, 5, 0));
    int ro = open(b, O_RDONLY);
    result("output read-only", copy_file_range(in, NULL, ro, NULL, 5, 0));
    int app = open(b, O_WRONLY | O_APPEND);
    result("output O_APPEND", copy_file_range(in, NULL, app, NULL, 5, 0));
    result("overlap", copy_file_range(in, &(loff_t){0}, in, &(loff_t){3}, 10, 0));
    result("same file apart", copy_file_range(in, &(loff_t){0}, in, &(loff_t){30}, 5, 0));
    result("negative offset", copy_file_range(in, &(loff_t){-1}, out, NULL, 5, 0));
    result("length 0", copy_file_range(in, NULL, out, NULL, 0, 0));
    unlink(a); unlink(b); rmdir(dir);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "copy_file_range", PROGRAM, arch=request.param)


def test_copy_file_range_as_natively(program):
    compare_with_native(program, b"out: hellofile_range")
