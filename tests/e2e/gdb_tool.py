"""Debian's gdb for the tests that drive it (tests/e2e/gdb_batch.py).

The README's test command must work on a fresh machine, which has apt but no gdb: the first
test that needs it installs the Debian package, as .ci/run does, rather than failing or
skipping. A host without apt, or without root, fails those tests with the reason.
"""
import shutil

from tests.e2e.debian_bins import DebianBinsError, refresh_lists_unless_available, run_as_root


def ensure_gdb() -> str:
    found = shutil.which("gdb")
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise DebianBinsError("gdb is not installed and there is no apt-get to install it with")
    refresh_lists_unless_available(["gdb"])
    run_as_root(["apt-get", "install", "-y", "-q", "--no-install-recommends", "gdb"])
    found = shutil.which("gdb")
    if found is None:
        raise DebianBinsError("apt-get installed gdb, but it is not on PATH")
    return found
