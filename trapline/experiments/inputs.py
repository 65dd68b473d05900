"""A point's files, shipped by content: a Tree is the root file system the guest runs in, as a
list of (guest path, sha256, mode) with the bytes beside it, never a host path.

The submitting host reads each input once (a shipped sample, a program file, every file of a
rootfs); a worker — a local process or a Dask worker on another machine — writes the tree into
its own cache, named by the tree's hash, and runs the guest there with that folder as its root.
So the guest sees the same paths (/bin/NAME, or the rootfs's own) whoever runs it, and the
results cannot depend on where the submitting host kept the files.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PROGRAM_DIR = "/bin"             # where a program given without a rootfs appears in the guest


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Entry:
    path: str                    # guest path, absolute
    kind: str                    # "file", "dir" or "link"
    sha256: str = ""             # file: its content's; link: its target's text's
    mode: int = 0o644
    size: int = 0
    target: str = ""             # link only
    source: str = ""             # where the submitting host read it (for the manifest)


@dataclass
class Tree:
    entries: list[Entry] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)      # sha256 -> bytes

    @property
    def digest(self) -> str:
        lines = "".join(f"{e.path}\0{e.kind}\0{e.sha256}\0{e.mode:o}\0{e.target}\n"
                        for e in sorted(self.entries, key=lambda e: e.path))
        return sha256(lines.encode())

    def add_file(self, guest: str, data: bytes, mode: int, source: str) -> None:
        digest = sha256(data)
        self.blobs[digest] = data
        self.entries.append(Entry(guest, "file", digest, mode & 0o777, len(data), source=source))


def program_tree(data: bytes, name: str, source: str) -> tuple[Tree, str]:
    """A static program alone: /bin/NAME (a dynamic one needs its rootfs)."""
    tree = Tree()
    tree.entries.append(Entry(PROGRAM_DIR, "dir", mode=0o755))
    guest = f"{PROGRAM_DIR}/{name}"
    tree.add_file(guest, data, 0o755, source)
    return tree, guest


def rootfs_tree(root: Path, source_prefix: str) -> Tree:
    """Every directory, file and symbolic link under `root`, as the guest would see them."""
    tree = Tree()
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        relative = os.path.relpath(folder, root)
        rel = "" if relative == "." else "/" + relative.replace(os.sep, "/")
        for name in dirs + sorted(files):
            host = os.path.join(folder, name)
            guest = f"{rel}/{name}"
            info = os.lstat(host)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(host)
                tree.entries.append(Entry(guest, "link", sha256(target.encode()), 0o777,
                                          target=target, source=f"{source_prefix}{guest}"))
            elif stat.S_ISDIR(info.st_mode):
                tree.entries.append(Entry(guest, "dir", mode=info.st_mode & 0o777))
            elif stat.S_ISREG(info.st_mode):
                tree.add_file(guest, Path(host).read_bytes(), info.st_mode, f"{source_prefix}{guest}")
    return tree


def cache_root() -> Path:
    """The worker's cache of trees (per user: never shared with another account)."""
    return Path(tempfile.gettempdir()) / f"trapline-experiments-{os.getuid()}" / "trees"


def materialize(entries: list[Entry], blobs: dict[str, bytes], digest: str) -> Path:
    """The folder holding the tree `digest`, written once per worker host: built aside, then
    renamed into place, so a reader never sees half a tree (two writers: the first rename wins)."""
    final = cache_root() / digest
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=final.parent))
    for entry in sorted(entries, key=lambda e: e.path):
        host = building / entry.path.lstrip("/")
        host.parent.mkdir(parents=True, exist_ok=True)
        if entry.kind == "dir":
            host.mkdir(exist_ok=True)
        elif entry.kind == "link":
            os.symlink(entry.target, host)
        else:
            data = blobs[entry.sha256]
            if sha256(data) != entry.sha256:
                raise ValueError(f"{entry.path}: the bytes shipped are not the ones hashed")
            host.write_bytes(data)
            host.chmod(entry.mode)
    for entry in entries:                  # directory modes last: a 0555 one was written into
        if entry.kind == "dir":
            (building / entry.path.lstrip("/")).chmod(entry.mode | 0o700)
    try:
        building.rename(final)
    except OSError:                        # another worker put it there first
        import shutil
        shutil.rmtree(building, ignore_errors=True)
    return final
