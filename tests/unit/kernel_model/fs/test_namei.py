"""kernel_model.fs.namei: the path walk on its own, over an in-memory tree of nodes.

The oracle is Linux itself: openat2(2) with RESOLVE_IN_ROOT resolves a path as if the
directory it is given were the process root (`..` stops there, absolute symlinks restart
there), which is exactly the walk's contract. The same tree is built in memory and in a host
folder, and hypothesis draws paths through dots, symlinks (absolute, relative, climbing,
dangling, looping, to a file) and missing names: the walk must name the same file, or fail
with the same errno (ENOENT, ENOTDIR, ELOOP), as the host kernel.
"""
import ctypes
import errno
import os

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import MAXSYMLINKS, S_IFDIR, S_IFLNK, S_IFREG
from kernel_model.fs.namei import LAST_DOTDOT, LAST_NORM, LAST_ROOT, Walker
from kernel_model.fs.node import Node
from kernel_model.fs.resolve import RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS

# The tree: directories, files, and symlinks (name -> target).
DIRS = ("a", "a/b", "a/b/c", "d")
FILES = ("f", "a/g", "a/b/h")
LINKS = {"abs": "/a/b", "rel": "a/b", "up": "../../..", "a/b/back": "../..", "a/tofile": "g",
         "a/b/c/top": "/", "dangling": "nothing/here", "loop": "loop2", "loop2": "loop",
         "d/host": "/etc", "d/self": ".", "d/chain": "../abs/back/d"}
NAMES = ("a", "b", "c", "d", "f", "g", "h", "abs", "rel", "up", "back", "tofile", "top",
         "dangling", "loop", "host", "self", "chain", "nothing", ".", "..", "")


class _Node(Node):
    def __init__(self, fmt: int, target: bytes = b""):
        self.fmt, self._target, self.children = fmt, target, {}

    def lookup(self, name: bytes):
        if not self.is_dir:
            raise GuestErrno(E.ENOTDIR)
        return self.children.get(name)

    def readlink(self) -> bytes:
        return self._target


def _memory_tree() -> _Node:
    root = _Node(S_IFDIR)

    def parent_of(path: str) -> tuple[_Node, bytes]:
        *dirs, name = path.split("/")
        node = root
        for part in dirs:
            node = node.children[part.encode()]
        return node, name.encode()
    for path in DIRS:
        node, name = parent_of(path)
        node.children[name] = _Node(S_IFDIR)
    for path in FILES:
        node, name = parent_of(path)
        node.children[name] = _Node(S_IFREG)
    for path, target in LINKS.items():
        node, name = parent_of(path)
        node.children[name] = _Node(S_IFLNK, target.encode())
    return root


@pytest.fixture(scope="module")
def host_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("namei")
    for path in DIRS:
        (root / path).mkdir()
    for path in FILES:
        (root / path).write_bytes(b"")
    for path, target in LINKS.items():
        (root / path).symlink_to(target)
    return root


def walker() -> Walker:
    return Walker(_memory_tree(), lambda name: None)


def walk(path: bytes, *, follow: bool = True) -> bytes | int:
    """The canonical path the walk names, or the errno it fails with (ENOENT for a missing
    last name, as a lookup would)."""
    try:
        resolved = walker().resolve(path, b"/", follow=follow)
    except GuestErrno as failure:
        return failure.errno
    return resolved.path if resolved.node is not None else errno.ENOENT


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_LIBC = ctypes.CDLL(None, use_errno=True)
_SYS_OPENAT2, _RESOLVE_IN_ROOT = 437, 0x10


def linux(root, path: bytes, *, follow: bool = True, start: str = "",
          resolve: int = _RESOLVE_IN_ROOT) -> bytes | int:
    """What Linux names for `path` with `root` as the process root (openat2 RESOLVE_IN_ROOT),
    or, with other `resolve` flags, walking from the folder `start` of `root`."""
    how = _OpenHow(os.O_PATH | (0 if follow else os.O_NOFOLLOW), 0, resolve)
    directory = os.open(root / start, os.O_PATH | os.O_DIRECTORY)
    try:
        for _ in range(100):
            fd = _LIBC.syscall(_SYS_OPENAT2, directory, path, ctypes.byref(how), ctypes.sizeof(how))
            # EAGAIN: a rename or mount anywhere on the host raced a ".." of the walk, and the
            # kernel could not prove it stayed inside the root; openat2(2) says to retry.
            if fd >= 0 or ctypes.get_errno() != errno.EAGAIN:
                break
        if fd < 0:
            return ctypes.get_errno()
        try:
            where = os.readlink(f"/proc/self/fd/{fd}").encode()
        finally:
            os.close(fd)
    finally:
        os.close(directory)
    relative = os.path.relpath(where, os.fsencode(root))
    return b"/" if relative == b"." else b"/" + relative


@settings(max_examples=300)
@given(st.booleans(), st.lists(st.sampled_from(NAMES), min_size=1, max_size=7), st.booleans(),
       st.booleans())
def test_the_walk_names_what_linux_names_in_a_chroot(host_root, absolute, parts, trailing, follow):
    path = ("/" if absolute else "") + "/".join(parts) + ("/" if trailing else "")
    assume(path)
    assert walk(path.encode(), follow=follow) == linux(host_root, path.encode(), follow=follow)


def scoped_walk(path: bytes, start: str, flags: int, follow: bool = True) -> bytes | int:
    """The walk with openat2's resolve `flags` from the folder `start`: what it names or the
    errno it fails with."""
    try:
        resolved = Walker(_memory_tree(), lambda name: None, resolve=flags).resolve(
            path, b"/" + start.encode(), follow=follow)
    except GuestErrno as failure:
        return failure.errno
    return resolved.path if resolved.node is not None else errno.ENOENT


@settings(max_examples=300)
@given(st.sampled_from(["", "a", "a/b", "d"]), st.booleans(), st.booleans(), st.booleans(),
       st.lists(st.sampled_from(NAMES), min_size=1, max_size=6), st.booleans())
def test_the_resolve_flags_restrict_the_walk_as_linux_s(host_root, start, beneath, no_symlinks,
                                                        absolute, parts, follow):
    """openat2's RESOLVE_BENEATH (no "..", absolute path or absolute link out of the starting
    folder: EXDEV) and RESOLVE_NO_SYMLINKS (no link followed: ELOOP), alone and together.
    Without BENEATH the walk starts at the root, which Linux's side holds with IN_ROOT."""
    path = (("/" if absolute else "") + "/".join(parts)).encode()
    assume(path)
    start = start if beneath else ""
    flags = (RESOLVE_BENEATH if beneath else 0) | (RESOLVE_NO_SYMLINKS if no_symlinks else 0)
    host = linux(host_root, path, follow=follow, start=start,
                 resolve=flags | (0 if beneath else _RESOLVE_IN_ROOT))
    assert scoped_walk(path, start, flags, follow) == host


@pytest.mark.parametrize("path, start, flags, expected", [
    (b"..", "a", RESOLVE_BENEATH, errno.EXDEV), (b"b/../..", "a", RESOLVE_BENEATH, errno.EXDEV),
    (b"/f", "a", RESOLVE_BENEATH, errno.EXDEV), (b"b/c/top", "a", RESOLVE_BENEATH, errno.EXDEV),
    (b"b/back", "a", RESOLVE_BENEATH, errno.EXDEV), (b"b/../g", "a", RESOLVE_BENEATH, b"/a/g"),
    (b"tofile", "a", RESOLVE_BENEATH, b"/a/g"), (b"abs", "", RESOLVE_NO_SYMLINKS, errno.ELOOP),
    (b"a/tofile", "", RESOLVE_NO_SYMLINKS, errno.ELOOP),
    (b"a/b/h", "", RESOLVE_NO_SYMLINKS, b"/a/b/h"),
])
def test_the_cases_the_resolve_property_must_meet(host_root, path, start, flags, expected):
    """The refusals (EXDEV, ELOOP) and the walks that stay allowed, each checked against Linux
    too, so the property above is not vacuous on them."""
    host = linux(host_root, path, start=start,
                 resolve=flags | (0 if flags & RESOLVE_BENEATH else _RESOLVE_IN_ROOT))
    assert scoped_walk(path, start, flags) == expected == host


@pytest.mark.parametrize("path, expected", [
    (b"/..", b"/"), (b"../../..", b"/"), (b"/a/../../d", b"/d"), (b"up", b"/"),
    (b"up/a/b/back/d", b"/d"), (b"/a/b/c/top/..", b"/"), (b"d/host", errno.ENOENT),
    (b"abs", b"/a/b"), (b"rel/back/f", b"/f"), (b"d/chain", b"/d"), (b"d/self/self/../f", b"/f"),
])
def test_nothing_leads_above_the_root(host_root, path, expected):
    """`..` at the root, a relative link that climbs, an absolute link (to /, or to a host
    path that exists outside: /etc) all stay inside; Linux agrees on each."""
    assert walk(path) == expected == linux(host_root, path)


@pytest.mark.parametrize("path, expected", [
    (b"/nothing", E.ENOENT), (b"/nothing/f", E.ENOENT), (b"dangling", E.ENOENT),
    (b"", E.ENOENT), (b"/f/x", E.ENOTDIR), (b"/f/", E.ENOTDIR), (b"a/tofile/", E.ENOTDIR),
    (b"/a/g/..", E.ENOTDIR), (b"loop", E.ELOOP), (b"loop/x", E.ELOOP),
])
def test_errors(path, expected):
    assert walk(path) == expected


def test_forty_links_are_followed_and_the_forty_first_is_eloop():
    root = _memory_tree()
    for i in range(MAXSYMLINKS + 1):
        target = f"c{i + 1}" if i < MAXSYMLINKS else "d"
        root.children[f"c{i}".encode()] = _Node(S_IFLNK, target.encode())
    chained = Walker(root, lambda name: None)
    assert chained.resolve(b"c1", b"/", follow=True).path == b"/d"            # 40 links
    with pytest.raises(GuestErrno) as failure:
        chained.resolve(b"c0", b"/", follow=True)                              # 41
    assert failure.value.errno == E.ELOOP


def test_a_missing_last_name_is_returned_with_its_parent_for_creation():
    resolved = walker().resolve(b"/a/b/new", b"/", follow=False, parent_op=True)
    assert (resolved.node, resolved.name, resolved.last, resolved.path) == \
        (None, b"new", LAST_NORM, b"/a/b/new")
    assert [name for name, _ in resolved.chain] == [b"", b"a", b"b"]


def test_an_operation_on_a_name_acts_on_a_trailing_slash_symlink_itself():
    """unlink("link/") and friends see the link, not its target (parent_op)."""
    resolved = walker().resolve(b"/abs/", b"/", follow=False, parent_op=True)
    assert resolved.node.is_symlink and resolved.name == b"abs"


def test_relative_paths_start_at_the_cwd_and_dots_report_how_they_ended():
    w = walker()
    assert w.resolve(b"h", b"/a/b", follow=True).path == b"/a/b/h"
    assert w.resolve(b"..", b"/a/b", follow=True).last == LAST_DOTDOT
    assert w.resolve(b"/", b"/a", follow=True).last == LAST_ROOT


def test_a_process_root_bounds_dotdot_and_absolute_links():
    """After chroot("/a"): `/` is /a, `..` stays there, and an absolute link starts there."""
    w = Walker(_memory_tree(), lambda name: None, process_root=b"/a")
    assert w.resolve(b"/..", b"/a", follow=True).path == b"/a"
    assert w.resolve(b"/b/c/top", b"/a", follow=True).path == b"/a"
    assert w.resolve(b"/g", b"/a", follow=True).path == b"/a/g"
