"""Property: in a write-through root, no sequence of renames, symlinks and opens lets an open
handle show anything of the host outside the root.

A random sequence renames names around, plants symlinks to a host folder outside the root (by
absolute host path, and climbing relative ones), opens directories and files (kept open, some
O_PATH), then lists, stats, reads and resolves relative names from those old handles. The host
folder is full of bait with the same names as the root's; its names and bytes start with HOST.
Nothing observed may come from it: no listed name, no byte read, and the model's inode table
never meets a host inode of that folder (so no stat showed one either).
"""
import os
import tempfile
from pathlib import Path

from hypothesis import example, given, strategies as st

from kernel_model.errno import GuestErrno
from kernel_model.fs import FileSystem, O_DIRECTORY, O_PATH, O_RDONLY

from tests.unit.kernel_model.fs.helpers import PROC

names = st.sampled_from(["a", "b", "c", "d", "e"])
# Names of the tree (build) and a few new ones: most operations then do something.
paths = st.sampled_from(["/a", "/a/b", "/a/c", "/b", "/d", "/c", "/e", "/a/e", "/b/a"])
targets = st.sampled_from(["abs", "abs-sub", "climb"])
opens = st.tuples(st.just("open"), paths, st.booleans())     # True: O_PATH
swaps = st.tuples(st.just("swap"), paths, paths, targets)   # rename away, plant in its place
changes = st.one_of(swaps, swaps, st.tuples(st.just("rename"), paths, paths),
                    st.tuples(st.just("plant"), paths, targets))
# A round opens some handles, changes some names, then every handle kept so far is looked at.
rounds = st.lists(st.tuples(st.lists(opens, max_size=3), st.lists(changes, min_size=1,
                                                                   max_size=3)),
                  min_size=1, max_size=4)


def build(top: Path) -> tuple[Path, Path]:
    outside = top / "outside"
    for sub in ("", "a", "b", "a/b", "c"):
        (outside / sub).mkdir(parents=True, exist_ok=True)
        for name in ("HOSTx", "d"):
            (outside / sub / name).write_bytes(b"HOST bytes")
    root = top / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "c").write_bytes(b"guest a/c")
    (root / "d").write_bytes(b"guest d")
    (root / "c").symlink_to(outside)                    # a rootfs symlink to the host folder
    return root, outside


def host_identities(folder: Path) -> set:
    found = {(folder.lstat().st_dev, folder.lstat().st_ino)}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            found.add((st.st_dev, st.st_ino))
    return found


def change(fs: FileSystem, kept: list, op: tuple, outside: Path) -> None:
    kind = op[0]
    if kind == "open":
        kept.append(fs.open(op[1].encode(), O_PATH if op[2] else O_RDONLY, 0, b"/", PROC))
        return
    if kind == "rename":
        fs.rename(op[1].encode(), op[2].encode(), b"/", PROC)
        return
    if kind == "swap":
        fs.rename(op[1].encode(), op[2].encode(), b"/", PROC)
    target = {"abs": str(outside), "abs-sub": str(outside / "a"),
              "climb": "../../../../../../" + str(outside).lstrip("/")}[op[-1]]
    fs.symlink(target.encode(), op[1].encode(), b"/", PROC)


def observe(fs: FileSystem, f) -> list[bytes]:
    """Everything a guest can learn from an old handle: its entries, metadata, bytes, and
    what a relative name resolves to from it."""
    seen: list[bytes] = []
    for look in (lambda: [entry.name for entry in f.getdents()],
                 lambda: [b"%d" % f.stat().ino],
                 lambda: [f.pread(64, 0)],
                 *(lambda name=name: [fs.open(name, O_RDONLY, 0, f.path, PROC).pread(64, 0)]
                   for name in (b"d", b"HOSTx", b"a/HOSTx"))):
        f.seek(0, 0) if not f.flags & O_PATH else None
        try:
            seen += look()
        except GuestErrno:
            pass
    return seen


@given(rounds)
@example([([("open", "/a", False)], [("swap", "/a", "/b", "abs")])])        # the escape
@example([([("open", "/a/b", True)], [("swap", "/a", "/b", "climb")])])
def test_old_handles_never_show_the_host(plan):
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = build(Path(tmp))
        bait = host_identities(outside)
        fs = FileSystem(str(root), writable=True)
        kept: list = []
        for opened, changed in plan:
            for op in opened + changed:
                try:
                    change(fs, kept, op, outside)
                except GuestErrno:
                    pass
            for f in kept:
                for thing in observe(fs, f):
                    assert not thing.startswith(b"HOST"), (plan, thing)
            assert not bait & set(fs._table._by_key), plan
        for f in kept:
            f.close()
