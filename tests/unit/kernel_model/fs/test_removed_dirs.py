"""A directory removed while open: its handle lists nothing and says ENOENT, as iterate_dir()
answers for a dead directory, in the overlay and in write-through mode alike (the host says
the same for a real one)."""
import pytest

from kernel_model import errno as E
from kernel_model.fs import FileSystem, O_DIRECTORY, O_RDONLY

from .helpers import PROC, errno_of


@pytest.mark.parametrize("writable", [False, True])
@pytest.mark.parametrize("how", ["rmdir", "replaced"])
def test_a_removed_directory_lists_enoent(rootfs, writable, how):
    fs = FileSystem(str(rootfs), writable=writable)
    fs.mkdir(b"/gone", 0o755, b"/", PROC)
    f = fs.open(b"/gone", O_RDONLY | O_DIRECTORY, 0, b"/", PROC)
    if how == "rmdir":
        fs.rmdir(b"/gone", b"/", PROC)
    else:
        fs.mkdir(b"/other", 0o755, b"/", PROC)
        fs.rename(b"/other", b"/gone", b"/", PROC)
    assert errno_of(f.getdents) == E.ENOENT
    assert f.stat().mode & 0o170000 == 0o040000       # still the directory it opened
