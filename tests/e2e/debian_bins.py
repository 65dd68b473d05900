"""Debian's static busybox and bash, fetched once into a git-ignored cache.

The e2e tests compare trapline against the native behaviour of real third-party binaries
(docs/ARCHITECTURE.md, Testing). Debian's ``busybox-static`` and ``bash-static`` are ideal: fully
static (no dynamic loader to model), built by someone else, and the same source version
for amd64 and i386, so one arch's native output is a valid oracle for the other.

Only the standard library is used so that ``tests/e2e/fetch_debian_bins.py`` can run
before the project is installed (``.ci/run`` prefetches with it).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE_DIR = Path(__file__).resolve().parent / ".cache" / "debian"
ARCHES = ("amd64", "i386")


@dataclass(frozen=True)
class DebianBinary:
    """One program we need: its Debian package and where the package installs it."""

    name: str
    package: str
    path_in_package: str


BINARIES = (
    DebianBinary("busybox", "busybox-static", "bin/busybox"),
    DebianBinary("bash", "bash-static", "bin/bash-static"),
)

# Written last, after every binary of an arch is extracted: its presence is what makes
# a later call a no-op, so an interrupted fetch is simply redone.
COMPLETE_MARKER = ".complete"


class DebianBinsError(RuntimeError):
    """The Debian binaries could not be obtained; the message says why and what to do."""


def binary_paths(cache_dir: Path = CACHE_DIR) -> dict[str, dict[str, Path]]:
    """{arch: {"busybox": path, "bash": path}} inside the cache (whether or not present)."""
    return {
        arch: {b.name: cache_dir / arch / "root" / b.path_in_package for b in BINARIES}
        for arch in ARCHES
    }


def ensure_debian_bins(cache_dir: Path = CACHE_DIR) -> dict[str, dict[str, Path]]:
    """Fetch and extract the binaries unless already cached; return their paths.

    Safe to call from several pytest-xdist workers at once: an exclusive flock on a lock
    file serialises them, and everyone after the first finds the marker and returns.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [arch for arch in ARCHES if not _is_complete(cache_dir / arch)]
        if missing:
            require_tools(cache_dir)
            if "i386" in missing:
                enable_i386_architecture([f"{b.package}:i386" for b in BINARIES])
            for arch in missing:
                _fetch_arch(cache_dir / arch, arch)
    return binary_paths(cache_dir)


def package_version(arch: str, binary: str, cache_dir: Path = CACHE_DIR) -> str:
    """The Debian version string recorded when the package was extracted."""
    return (cache_dir / arch / f"{binary}.version").read_text().strip()


def _is_complete(arch_dir: Path) -> bool:
    if not (arch_dir / COMPLETE_MARKER).is_file():
        return False
    return all((arch_dir / "root" / b.path_in_package).is_file() for b in BINARIES)


def require_tools(cache_dir: Path, what: str = "Debian busybox-static/bash-static") -> None:
    absent = [tool for tool in ("apt-get", "dpkg", "dpkg-deb") if shutil.which(tool) is None]
    if absent:
        raise DebianBinsError(
            f"cannot fetch {what}: {', '.join(absent)} not found. "
            "The e2e tests need a Debian/Ubuntu host with apt (CI installs it), or a cache "
            f"already filled by 'python tests/e2e/fetch_debian_bins.py' at {cache_dir}."
        )


def enable_i386_architecture(wanted: list[str]) -> None:
    """Make the ``pkg:i386`` packages in ``wanted`` downloadable: add the foreign arch
    and refresh the lists (tests/e2e/debian_rootfs.py uses this too).

    Done only when one is missing, because it changes the host's apt configuration and
    needs root (we are root in the dev container and in CI).
    """
    native = run(["dpkg", "--print-architecture"]).strip()
    foreign = run(["dpkg", "--print-foreign-architectures"]).split()
    if native != "i386" and "i386" not in foreign:
        run_as_root(["dpkg", "--add-architecture", "i386"])
    refresh_lists_unless_available(wanted)


def refresh_lists_unless_available(wanted: list[str]) -> None:
    """``apt-get update`` unless every package in ``wanted`` has a candidate already (a
    fresh Debian image has no package lists at all)."""
    if all(_has_candidate(package) for package in wanted):
        return
    try:
        run_as_root(["apt-get", "update"])
    except DebianBinsError:
        # apt-get update fails as a whole when any one list fails (a security mirror
        # mid-sync, say); what matters is whether our packages became available.
        if not all(_has_candidate(package) for package in wanted):
            raise


def _has_candidate(package: str) -> bool:
    policy = run(["apt-cache", "policy", package])
    return "Candidate:" in policy and "Candidate: (none)" not in policy


def _fetch_arch(arch_dir: Path, arch: str) -> None:
    if arch_dir.exists():
        shutil.rmtree(arch_dir)
    root = arch_dir / "root"
    root.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="trapline-debs-") as tmp:
        # apt-get download drops privileges to the _apt user, which must be able to
        # write the target folder; otherwise it warns and downloads as root.
        os.chmod(tmp, 0o777)
        packages = [f"{b.package}:{arch}" for b in BINARIES]
        run(["apt-get", "download", "-q", *packages], cwd=tmp)
        for binary in BINARIES:
            deb = _single_deb(Path(tmp), binary.package, arch)
            run(["dpkg-deb", "-x", str(deb), str(root)])
            version = run(["dpkg-deb", "-f", str(deb), "Version"]).strip()
            (arch_dir / f"{binary.name}.version").write_text(version + "\n")
    for binary in BINARIES:
        if not (root / binary.path_in_package).is_file():
            raise DebianBinsError(
                f"{binary.package}:{arch} did not contain /{binary.path_in_package}"
            )
    (arch_dir / COMPLETE_MARKER).write_text("ok\n")


def _single_deb(folder: Path, package: str, arch: str) -> Path:
    debs = sorted(folder.glob(f"{package}_*_{arch}.deb"))
    if len(debs) != 1:
        raise DebianBinsError(f"expected one {package}_*_{arch}.deb, found {debs}")
    return debs[0]


def run_as_root(argv: list[str]) -> str:
    if os.geteuid() != 0:
        raise DebianBinsError(
            f"'{' '.join(argv)}' is needed to fetch the i386 packages and requires root; "
            "run 'sudo python tests/e2e/fetch_debian_bins.py' once."
        )
    return run(argv)


def run(argv: list[str], cwd: str | None = None) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as error:
        raise DebianBinsError(f"cannot run {argv[0]}: {error}") from error
    if done.returncode != 0:
        raise DebianBinsError(
            f"'{' '.join(argv)}' failed with status {done.returncode}: "
            f"{done.stderr.strip() or done.stdout.strip()}"
        )
    return done.stdout
