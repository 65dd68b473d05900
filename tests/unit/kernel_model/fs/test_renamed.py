"""Kept paths follow a rename as dentries do (fs/renamed.py)."""
from dataclasses import dataclass, field

from kernel_model.fs.renamed import follow_rename, moved


def test_moved_rewrites_the_name_and_what_is_beneath_it_only():
    assert moved(b"/a", b"/a", b"/b") == b"/b"
    assert moved(b"/a/x/y", b"/a", b"/b/c") == b"/b/c/x/y"
    assert moved(b"/ab", b"/a", b"/b") == b"/ab"
    assert moved(b"/", b"/a", b"/b") == b"/"


@dataclass
class Entry:
    file: object


@dataclass
class File:
    path: bytes


@dataclass
class Table:
    entries: dict = field(default_factory=dict)


@dataclass
class Proc:
    cwd: bytes
    root: bytes
    exe: bytes
    fds: Table


def test_follow_rename_moves_cwd_root_exe_and_open_files_once():
    shared = File(b"/a/f")
    one = Proc(b"/a/d", b"/a", b"/a/bin/sh", Table({3: Entry(shared), 4: Entry(File(b"/x"))}))
    two = Proc(b"/", b"/", b"/bin/sh", Table({5: Entry(shared), 6: Entry(object())}))
    follow_rename([one, two], b"/a", b"/a2")
    assert (one.cwd, one.root, one.exe) == (b"/a2/d", b"/a2", b"/a2/bin/sh")
    assert shared.path == b"/a2/f" and one.fds.entries[4].file.path == b"/x"
    assert (two.cwd, two.root, two.exe) == (b"/", b"/", b"/bin/sh")
