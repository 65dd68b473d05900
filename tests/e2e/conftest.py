"""Fixtures for the e2e tests: Debian's binaries, and root folders to run them in.

A rootfs is a plain host folder laid out like a tiny Linux system. trapline gets it with
``--rootfs``; the native reference run chroots into the same folder (sandbox_runner.py),
so both sides see the same bytes at the same paths. Everything in it is generated
deterministically, mtimes included, so listings and archives are reproducible.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.e2e.deb_extract import DebExtractError
from tests.e2e.debian_bins import ARCHES, DebianBinsError, ensure_debian_bins
from tests.e2e.debian_rootfs import ensure_debian_rootfs
from tests.e2e.rootfs_etc import RootfsEtcError
from tests.e2e.rootfs_variants import SAMPLE_ARCH, add_programs, linked_copy

# 2021-01-02 03:04:05 UTC: every file under /work and /etc carries this mtime.
FIXED_MTIME = 1609556645

# Applets reachable through /bin/NAME -> busybox symlinks (busybox dispatches on the
# basename of argv[0]). Kept explicit so the tree, and thus `ls /bin`, is reproducible.
APPLET_LINKS = (
    "[", "awk", "basename", "cat", "cp", "cut", "date", "dd", "dirname", "echo", "env", "expr",
    "false", "grep", "gzip", "head", "ln", "ls", "md5sum", "mkdir", "mv", "od",
    "printf", "rm", "sed", "seq", "sh", "sha256sum", "sleep", "sort", "stat", "tail", "tar",
    "test", "tr", "true", "uniq", "wc", "xargs", "yes",
)

LINES = (
    "banana 3 yellow\n"
    "apple 10 red\n"
    "cherry 7 red\n"
    "apple 10 red\n"
    "date 2 brown\n"
    "elderberry 15 purple\n"
    "fig 4 purple\n"
    "banana 3 yellow\n"
    "grape 21 green\n"
    "\tindented\twith tabs\n"
)

TREE_FILES = {
    "tree/a.txt": b"alpha\n",
    "tree/b.txt": b"bravo\nbravo\n",
    "tree/sub/c.txt": b"charlie\n" * 100,
    "tree/sub/deeper/d.bin": bytes(range(256)) * 4,
    "tree/sub/empty": b"",
}


@pytest.fixture(scope="session")
def debian_bins() -> dict[str, dict[str, Path]]:
    """{arch: {"busybox": path, "bash": path}}; fails (never skips) if apt cannot fetch them."""
    try:
        return ensure_debian_bins()
    except DebianBinsError as error:
        pytest.fail(f"Debian static binaries unavailable: {error}", pytrace=False)


@pytest.fixture(scope="session")
def debian_rootfs() -> dict[str, Path]:
    """{arch: Debian 12 userland rootfs} (tests/e2e/debian_rootfs.py), shared and cached:
    give it to trapline without --writable and run natively with native_oracle.py, which
    mounts it read-only. Fails (never skips) if it cannot be assembled."""
    try:
        return ensure_debian_rootfs()
    except (DebianBinsError, DebExtractError, RootfsEtcError) as error:
        pytest.fail(f"Debian rootfs unavailable: {error}", pytrace=False)


@pytest.fixture(scope="session")
def dyn_samples_rootfs(debian_rootfs, tmp_path_factory):
    """dyn_samples_rootfs(arch) -> a hard-linked copy of the Debian rootfs with the
    dynamically linked samples (samples/dyn/bin/ARCH/*) in /opt/trapline (made once)."""
    built: dict[str, Path] = {}
    samples = Path(__file__).resolve().parents[2] / "samples" / "dyn" / "bin"

    def get(arch: str) -> Path:
        if arch not in built:
            root = linked_copy(debian_rootfs[arch], tmp_path_factory.mktemp(f"dyn-{arch}") / "root")
            add_programs(root, sorted((samples / SAMPLE_ARCH[arch]).glob("*")))
            built[arch] = root
        return built[arch]

    return get


@pytest.fixture(scope="session")
def native_arch(debian_bins) -> dict[str, str]:
    """{arch: arch whose busybox runs natively as that arch's reference}.

    Hosts without ia32 emulation cannot run the i386 binaries; the amd64 build of the same
    Debian busybox/bash version prints the same output for these applets and scripts, so
    its native run is then the reference for i386 too.
    """
    choice = {}
    for arch in ARCHES:
        try:
            runs = subprocess.run([str(debian_bins[arch]["busybox"]), "true"]).returncode == 0
        except OSError:
            runs = False
        choice[arch] = arch if runs else "amd64"
    return choice


@pytest.fixture(scope="session")
def rootfs_for(debian_bins, tmp_path_factory):
    """rootfs_for(arch) -> a shared, read-only rootfs folder (built once per session)."""
    built: dict[str, Path] = {}

    def get(arch: str) -> Path:
        if arch not in built:
            built[arch] = build_rootfs(tmp_path_factory.mktemp(f"rootfs-{arch}"), debian_bins[arch])
        return built[arch]

    return get


@pytest.fixture
def fresh_rootfs(rootfs_for, tmp_path):
    """fresh_rootfs(arch, name) -> a private copy that a test may modify."""

    def copy(arch: str, name: str) -> Path:
        destination = tmp_path / name
        shutil.copytree(rootfs_for(arch), destination, symlinks=True)
        return destination

    return copy


def build_rootfs(root: Path, binaries: dict[str, Path]) -> Path:
    """Lay out /bin, /etc, /work, /tmp and the /dev, /proc mount points under ``root``."""
    for folder in ("bin", "etc", "tmp", "dev", "proc", "work"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "tmp").chmod(0o1777)
    shutil.copy2(binaries["busybox"], root / "bin" / "busybox")
    shutil.copy2(binaries["bash"], root / "bin" / "bash")
    for applet in APPLET_LINKS:
        (root / "bin" / applet).symlink_to("busybox")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    _write_work_files(root / "work")
    _fix_mtimes(root / "work")
    _fix_mtimes(root / "etc")
    return root


def _write_work_files(work: Path) -> None:
    (work / "lines.txt").write_text(LINES)
    (work / "sorted.txt").write_text("".join(sorted(LINES.splitlines(keepends=True))))
    (work / "blob.bin").write_bytes(deterministic_bytes(2 * 1024 * 1024))
    for relative, content in TREE_FILES.items():
        path = work / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (work / "tree" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (work / "tree" / "run.sh").chmod(0o755)
    (work / "tree" / "link").symlink_to("a.txt")
    (work / "tree.tar").write_bytes(tree_archive())


def deterministic_bytes(size: int) -> bytes:
    """``size`` pseudo-random bytes that are the same on every run (SHA-256 counter mode)."""
    blocks = (hashlib.sha256(i.to_bytes(8, "little")).digest() for i in range(size // 32 + 1))
    return b"".join(blocks)[:size]


def tree_archive() -> bytes:
    """A ustar archive of TREE_FILES with fixed owners and mtimes, built by Python."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        folders = sorted({str(Path(p).parent) for p in TREE_FILES} | {"tree"})
        for name in folders:
            archive.addfile(_tar_member(name, tarfile.DIRTYPE, 0o755))
        for name, content in sorted(TREE_FILES.items()):
            member = _tar_member(name, tarfile.REGTYPE, 0o644)
            member.size = len(content)
            archive.addfile(member, io.BytesIO(content))
        link = _tar_member("tree/link", tarfile.SYMTYPE, 0o777)
        link.linkname = "a.txt"
        archive.addfile(link)
    return buffer.getvalue()


def _tar_member(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.mode, member.mtime = kind, mode, FIXED_MTIME
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    return member


def _fix_mtimes(top: Path) -> None:
    # Bottom-up, so that setting a child's time does not disturb its parent's afterwards.
    for folder, dirs, files in os.walk(top, topdown=False):
        for name in files + dirs:
            os.utime(Path(folder) / name, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
    os.utime(top, (FIXED_MTIME, FIXED_MTIME))
