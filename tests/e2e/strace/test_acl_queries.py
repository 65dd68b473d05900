"""Debian's `ls -l` asks each file for its POSIX ACL (coreutils' file_has_acl, gnulib
file-has-acl.c: getxattr of system.posix_acl_access, and of system.posix_acl_default for a
directory) until the file system says it has none: EOPNOTSUPP stops the asking, ENODATA says
"this file has none". The sandbox answered EOPNOTSUPP where Linux's ext4 answers ENODATA, so
its `ls -l /etc` asked once and made hundreds of calls fewer than natively; now the
getxattr and lgetxattr calls are strace's, each one, on both arches."""
import pytest

from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

ARGV = ["/usr/bin/ls", "-l", "/etc"]


def _calls(lines: list[str], name: str) -> list[str]:
    return [line for line in lines if line.startswith(name + "(")]


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_ls_l_asks_every_file_for_its_acl_as_natively(arch, debian_rootfs):
    result = compare("ls-l-acls", arch, ARGV, debian_rootfs[arch],
                     options=("-e", "trace=execve,getxattr,lgetxattr"))
    asked = [line for line in _calls(result.native, "getxattr") if "posix_acl_access" in line]
    assert len(asked) >= 20 and all("ENODATA" in line for line in asked), result.native_text
    for name in ("getxattr", "lgetxattr"):
        assert len(_calls(result.sandbox, name)) == len(_calls(result.native, name)), result.diff()
    assert result.native == result.sandbox, result.diff()
