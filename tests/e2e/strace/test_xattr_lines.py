"""The xattr calls' lines as strace 6.1 prints them (strace's xattr.c): a value as printstr_ex
with QUOTE_OMIT_TRAILING_0 (a NUL ending the 32 bytes shown is dropped, and no "..." follows
it), setxattr's flags by name (XATTR_CREATE|XATTR_REPLACE, `0x4 /* XATTR_??? */`), getxattr's
value as an address when it asked for the length, listxattr's names as a plain buffer. The
sandbox showed the value as a plain buffer and the flags in hex. Line-identical with native
strace on both arches."""
import pytest

from tests.e2e.static_c import build_static
from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

SOURCE = r"""
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/xattr.h>

int main(int argc, char **argv)
{
    char file[256], buf[256], big[40], nul_at_32[40];
    static const unsigned char acl[] = {2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 2, 0, 4, 0,
                                        232, 3, 0, 0, 4, 0, 4, 0, 255, 255, 255, 255, 16, 0, 5, 0,
                                        255, 255, 255, 255, 32, 0, 0, 0, 255, 255, 255, 255};
    snprintf(file, sizeof file, "%s/file", argv[1]);
    close(open(file, O_CREAT | O_WRONLY, 0644));
    memset(big, 'a', sizeof big);
    memcpy(nul_at_32, big, sizeof big);
    nul_at_32[31] = 0;
    setxattr(file, "user.a", "v", 2, 0);
    setxattr(file, "user.b", big, sizeof big, XATTR_CREATE);
    setxattr(file, "user.c", nul_at_32, sizeof nul_at_32, 0);
    setxattr(file, "user.d", "ab\0cd", 5, 0);
    setxattr(file, "user.e", "", 0, 0);
    setxattr(file, "user.f", "x", 1, XATTR_CREATE | XATTR_REPLACE);
    setxattr(file, "user.f", "x", 1, 4);
    setxattr(file, "user.f", "x", 1, XATTR_CREATE | 4);
    setxattr(file, "system.posix_acl_access", acl, sizeof acl, 0);
    getxattr(file, "system.posix_acl_access", buf, sizeof buf);
    getxattr(file, "user.b", buf, sizeof buf);
    getxattr(file, "user.c", buf, sizeof buf);
    getxattr(file, "user.a", buf, 0);
    getxattr(file, "user.a", NULL, 0);
    getxattr(file, "user.a", buf, 1);
    getxattr(file, "user.none", buf, sizeof buf);
    listxattr(file, buf, sizeof buf);
    listxattr(file, buf, 0);
    removexattr(file, "user.a");
    unlink(file);
    return 0;
}
"""
CALLS = "execve,setxattr,getxattr,listxattr,removexattr"
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_xattr_calls_line_for_line_as_strace(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"xattr_lines_{arch}", SOURCE, arch=GCC_ARCH[arch])
    folder = tmp_path_factory.mktemp("xattr_lines_files")
    result = compare("xattr-lines", arch, [str(program), str(folder)], None,
                     options=("-e", f"trace={CALLS}"))
    omitted = [line for line in result.native if line.startswith('setxattr(') and '"v",' in line]
    assert omitted and any("XATTR_??? */" in line for line in result.native), result.native_text
    assert result.native == result.sandbox, result.diff()
