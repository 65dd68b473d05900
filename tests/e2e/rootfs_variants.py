"""Variants of the cached Debian rootfs for tests: with extra programs, or with a library gone.

The cached rootfs (debian_rootfs.py) is shared by every test and never written. A variant
is a hard-linked copy (``cp -al``: quick, and no extra space for its thousands of files) that a test
may change by adding or removing paths. Neither side ever writes a file of it in place:
trapline runs it without --writable (in-memory overlay) and the native oracle mounts it
read-only, so the cache's files, which the copy shares, stay as apt unpacked them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.e2e.debian_bins import ARCHES

# Debian's arch names -> the samples' folder names (samples/bin/dyn/ARCH).
SAMPLE_ARCH = {"amd64": "x86_64", "i386": "i386"}
assert set(SAMPLE_ARCH) == set(ARCHES)

# Where a variant puts extra programs (a folder no Debian package of the rootfs uses).
EXTRA_DIR = "opt/trapline"


def linked_copy(source: Path, destination: Path) -> Path:
    """A hard-linked copy of the rootfs ``source`` at ``destination`` (must not exist)."""
    done = subprocess.run(["cp", "-a", "-l", str(source), str(destination)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"cp -al {source} {destination}: {done.stderr.strip()}")
    return destination


def add_programs(root: Path, programs: list[Path]) -> list[str]:
    """Copy ``programs`` into /opt/trapline of ``root``; return their guest paths."""
    folder = root / EXTRA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    guest_paths = []
    for program in programs:
        shutil.copy2(program, folder / program.name)
        guest_paths.append(f"/{EXTRA_DIR}/{program.name}")
    return guest_paths


def remove_paths(root: Path, guest_paths: list[str]) -> None:
    """Unlink files of a variant (the cache keeps its own link to them)."""
    for guest_path in guest_paths:
        path = root / guest_path.lstrip("/")
        if not path.is_file():
            raise FileNotFoundError(f"{guest_path} is not a file of {root}")
        path.unlink()
