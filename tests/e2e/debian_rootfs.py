"""A Debian 12 userland rootfs per architecture (amd64, i386), for dynamically linked programs.

Issue 14's e2e tests compare trapline with native runs of Debian's own dynamically linked
programs (coreutils, grep, sed, gawk, tar, bash, dash, bc, jq, sqlite3, perl-base, ...).
The rootfs is assembled from Debian packages as the static busybox/bash are
(debian_bins.py): ``apt-get download`` and unpacking, cached under tests/e2e/.cache/rootfs/
(git-ignored), i386 through the i386 foreign architecture.

The package closure is not written by hand (it would rot with every point release): apt's
own resolver computes it, in a simulated install (``apt-get -s``) against an empty dpkg
status file and with the target arch made the only one, so the answer is "every package,
of this arch, that installing ROOT_PACKAGES on an empty system would install", without
Recommends. Versions are whatever the host's apt lists offer; both sides of a comparison
run the very same files, so the exact version never matters, and the manifest records it.

Idempotent and safe under pytest-xdist: an flock serialises callers, and a manifest
written last (with ROOT_PACKAGES and RECIPE) marks an arch complete; changing either
rebuilds that arch. Only the standard library is used (fetch_debian_bins.py calls this
before the project is installed).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.deb_extract import extract_deb, make_merged_links
from tests.e2e.debian_bins import (
    ARCHES,
    DebianBinsError,
    enable_i386_architecture,
    refresh_lists_unless_available,
    require_tools,
    run,
)
from tests.e2e.rootfs_etc import finish_rootfs

CACHE_DIR = Path(__file__).resolve().parent / ".cache" / "rootfs"

# What the tests run; apt adds their dependencies. libc-bin brings ldconfig, getent and
# iconv (nsswitch and gconv tests); the named libraries are listed although they are
# dependencies already, so that the rootfs keeps them if a program's dependencies change.
ROOT_PACKAGES = (
    "libc6", "libc-bin", "libgcc-s1", "libstdc++6",
    "coreutils", "grep", "sed", "gawk", "tar", "gzip", "xz-utils", "findutils", "diffutils",
    "bash", "dash", "bc", "jq", "sqlite3", "perl-base",
    "libpcre2-8-0", "libacl1", "libattr1", "libselinux1", "libmpfr6", "libgmp10",
    "liblzma5", "zlib1g", "libzstd1", "libbz2-1.0", "libcrypt1", "libreadline8", "libtinfo6",
)

# Bump when the way a rootfs is made changes (layout, /etc files): cached ones are rebuilt.
RECIPE = 3

MANIFEST = "manifest.json"

# apt-get -s prints one line per package it would unpack:
#   Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [i386])
# (a trailing "[]" or "[old version]" follows when apt would replace something).
_INST_LINE = re.compile(r"^Inst (?P<name>\S+) \((?P<version>\S+) .*\[(?P<arch>[a-z0-9]+)\]\)")


@dataclass(frozen=True)
class Package:
    """One package of a closure, exactly as apt would install it."""

    name: str
    version: str
    arch: str  # the arch of the .deb: the rootfs's own, or "all"


def rootfs_paths(cache_dir: Path = CACHE_DIR) -> dict[str, Path]:
    """{arch: the rootfs folder} inside the cache (whether or not present)."""
    return {arch: cache_dir / arch / "root" for arch in ARCHES}


def ensure_debian_rootfs(cache_dir: Path = CACHE_DIR) -> dict[str, Path]:
    """Assemble each arch's rootfs unless cached; return {arch: rootfs folder}."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [arch for arch in ARCHES if not is_complete(cache_dir / arch)]
        if missing:
            require_tools(cache_dir, "the Debian rootfs packages")
            if "i386" in missing:
                enable_i386_architecture(["libc6:i386", "coreutils:i386"])
            refresh_lists_unless_available([f"libc6:{arch}" for arch in missing])
            for arch in missing:
                build_arch(cache_dir / arch, arch)
    return rootfs_paths(cache_dir)


def installed_packages(arch: str, cache_dir: Path = CACHE_DIR) -> list[Package]:
    """The closure recorded when the arch's rootfs was built."""
    manifest = json.loads((cache_dir / arch / MANIFEST).read_text())
    return [Package(**entry) for entry in manifest["installed"]]


def is_complete(arch_dir: Path) -> bool:
    try:
        manifest = json.loads((arch_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("recipe") == RECIPE
        and manifest.get("packages") == list(ROOT_PACKAGES)
        and (arch_dir / "root" / "usr/bin/env").is_file()
    )


def resolve_closure(arch: str) -> list[Package]:
    """apt's answer to 'install ROOT_PACKAGES on an empty system of this arch'."""
    simulated = run([
        "apt-get", "-s", "-q", "--no-install-recommends",
        "-o", "Dir::State::status=/dev/null", *_only_arch(arch),
        "install", *ROOT_PACKAGES,
    ])
    packages = [
        Package(found["name"], found["version"], found["arch"])
        for found in map(_INST_LINE.match, simulated.splitlines()) if found
    ]
    if not packages:
        raise DebianBinsError(f"apt-get -s found nothing to install for {arch}:\n{simulated}")
    wrong = [p for p in packages if p.arch not in (arch, "all")]
    if wrong:
        raise DebianBinsError(f"the {arch} closure has packages of another arch: {wrong}")
    return sorted(packages, key=lambda p: p.name)


def build_arch(arch_dir: Path, arch: str) -> None:
    """Download the closure, unpack it merged-/usr, add /etc, then write the manifest."""
    if arch_dir.exists():
        shutil.rmtree(arch_dir)
    root = arch_dir / "root"
    root.mkdir(parents=True)
    packages = resolve_closure(arch)
    with tempfile.TemporaryDirectory(prefix="trapline-rootfs-") as tmp:
        # apt-get download drops privileges to the _apt user, which must be able to
        # write the target folder; otherwise it warns and downloads as root.
        os.chmod(tmp, 0o777)
        run(["apt-get", "download", "-q", *_only_arch(arch),
             *(f"{p.name}={p.version}" for p in packages)], cwd=tmp)
        for package in packages:
            extract_deb(_deb_file(Path(tmp), package), root)
    make_merged_links(root)
    finish_rootfs(root)
    manifest = {
        "recipe": RECIPE,
        "packages": list(ROOT_PACKAGES),
        "installed": [vars(p) for p in packages],
    }
    (arch_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def _only_arch(arch: str) -> list[str]:
    # Make ``arch`` the native and only architecture for this one apt call: plain names
    # then mean the arch's packages, and Multi-Arch: foreign dependencies (base-files,
    # debianutils) resolve to that arch too instead of the host's.
    return ["-o", f"APT::Architecture={arch}", "-o", f"APT::Architectures::={arch}"]


def _deb_file(folder: Path, package: Package) -> Path:
    # apt names the file NAME_VERSION_ARCH.deb with the epoch's ':' escaped as %3a.
    name = f"{package.name}_{package.version.replace(':', '%3a')}_{package.arch}.deb"
    path = folder / name
    if not path.is_file():
        present = sorted(p.name for p in folder.glob(f"{package.name}_*.deb"))
        raise DebianBinsError(f"apt-get download did not leave {name} (found {present})")
    return path
