"""Property: after chroot, no path leads out of the new root (Linux's follow_dotdot and
absolute symlinks restarting at nd->root), whatever mix of `..`, `.`, names and symlinks
(absolute, climbing, chained) it walks, as long as the cwd is inside the root; and every name
found is the one found from the guest root with the jail's prefix (a chroot is a view, not a
copy)."""
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, strategies as st

from kernel_model.errno import GuestErrno
from kernel_model.fs import FileSystem

from tests.unit.kernel_model.fs.helpers import FakeProcess

JAIL = b"/jail"


@dataclass
class Jailed(FakeProcess):
    def root(self) -> bytes:
        return JAIL


def build(top: Path) -> Path:
    root = top / "root"
    for base in (root, root / "jail"):                   # the same names inside and outside
        (base / "a" / "b").mkdir(parents=True)
        (base / "a" / "f").write_bytes(b"x")
        (base / "up").symlink_to("../../../..")
        (base / "abs").symlink_to("/a")
        (base / "a" / "back").symlink_to("../up/a")
        (base / "a" / "b" / "chain").symlink_to("../back/b")
    return root


parts = st.sampled_from([b"..", b".", b"a", b"b", b"f", b"up", b"abs", b"back", b"chain", b""])
paths = st.tuples(st.booleans(), st.lists(parts, min_size=1, max_size=8)).map(
    lambda t: (b"/" if t[0] else b"") + b"/".join(t[1]))
cwds = st.sampled_from([b"/jail", b"/jail/a", b"/jail/a/b"])


@given(st.lists(st.tuples(paths, cwds), min_size=1, max_size=20))
def test_nothing_resolves_outside_the_new_root(cases):
    with tempfile.TemporaryDirectory() as tmp:
        fs = FileSystem(str(build(Path(tmp))))
        jailed, free = Jailed(), FakeProcess()
        for path, cwd in cases:
            try:
                found = fs.realpath(path, cwd, jailed)
            except GuestErrno as exc:
                # The same walk from a root that is the jail folder's own copy fails alike.
                inside = cwd[len(JAIL):] or b"/"
                try:
                    fs.realpath(path, inside, free)
                except GuestErrno as twin:
                    assert twin.errno == exc.errno, (path, cwd)
                continue
            assert found == JAIL or found.startswith(JAIL + b"/"), (path, cwd, found)
            inside = cwd[len(JAIL):] or b"/"
            assert JAIL + fs.realpath(path, inside, free) in (found, found + b"/"), (path, cwd)
