"""Prefetch the Debian packages of the e2e tests: static busybox and bash, and the
dynamic userland rootfs of each arch (tests/e2e/debian_rootfs.py).

    python tests/e2e/fetch_debian_bins.py

Idempotent: a second run finds the caches and returns at once. ``.ci/run`` calls it before
pytest so that the downloads are not charged to the first test that asks for them, and so
that a host without apt or network fails here, with the reason, rather than in every test.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make ``tests.e2e`` importable from the repository root.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.e2e.deb_extract import DebExtractError  # noqa: E402
from tests.e2e.debian_bins import DebianBinsError, ensure_debian_bins  # noqa: E402
from tests.e2e.debian_rootfs import ensure_debian_rootfs, installed_packages  # noqa: E402
from tests.e2e.rootfs_etc import RootfsEtcError  # noqa: E402


def main() -> int:
    try:
        paths = ensure_debian_bins()
        roots = ensure_debian_rootfs()
    except (DebianBinsError, DebExtractError, RootfsEtcError) as error:
        print(f"fetch_debian_bins: {error}", file=sys.stderr)
        return 1
    for arch, binaries in paths.items():
        for name, path in binaries.items():
            print(f"{arch:6} {name:8} {path}")
    for arch, root in roots.items():
        print(f"{arch:6} {'rootfs':8} {root} ({len(installed_packages(arch))} packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
