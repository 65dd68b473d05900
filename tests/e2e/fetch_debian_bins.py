"""Prefetch Debian's static busybox and bash for the e2e tests.

    python tests/e2e/fetch_debian_bins.py

Idempotent: a second run finds the cache and returns at once. ``.ci/run`` calls it before
pytest so that the download is not charged to the first test that asks for the binaries.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script: make ``tests.e2e`` importable from the repository root.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.e2e.debian_bins import DebianBinsError, ensure_debian_bins  # noqa: E402


def main() -> int:
    try:
        paths = ensure_debian_bins()
    except DebianBinsError as error:
        print(f"fetch_debian_bins: {error}", file=sys.stderr)
        return 1
    for arch, binaries in paths.items():
        for name, path in binaries.items():
            print(f"{arch:6} {name:8} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
