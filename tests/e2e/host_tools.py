"""Debian's tools that the end-to-end tests drive: gdb (the GDB stub's client), strace (the
reference of `--strace`), Chromium and its driver (the explain pages).

The README's test command must work on a fresh machine, which has apt but none of these: the
first test that needs one installs its Debian package, as .ci/run does beforehand, rather than
failing or skipping. Tests run in several processes (pytest -n), so installs take a lock: two
apt-gets at once would fail on dpkg's own lock. A host without apt, or without root, fails those
tests with the reason.
"""
from __future__ import annotations

import fcntl
import shutil
import tempfile
from pathlib import Path

from tests.e2e.debian_bins import DebianBinsError, refresh_lists_unless_available, run_as_root

_LOCK = Path(tempfile.gettempdir()) / "trapline-tests-apt.lock"


def ensure_command(command: str, package: str) -> str:
    """The path of ``command``, installing Debian's ``package`` first if it is missing."""
    found = _find(command)
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise DebianBinsError(f"{command} is not installed and there is no apt-get to install it with")
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)           # another worker may be installing it now
        if _find(command) is None:
            refresh_lists_unless_available([package])
            run_as_root(["apt-get", "install", "-y", "-q", "--no-install-recommends", package])
    found = _find(command)
    if found is None:
        raise DebianBinsError(f"apt-get installed {package}, but {command} is not there")
    return found


def _find(command: str) -> str | None:
    if command.startswith("/"):
        return command if Path(command).exists() else None
    return shutil.which(command)


def ensure_gdb() -> str:
    return ensure_command("gdb", "gdb")


def ensure_strace() -> str:
    return ensure_command("/usr/bin/strace", "strace")


def ensure_chromium() -> tuple[str, str]:
    """(the browser, its driver)."""
    return ensure_command("/usr/bin/chromium", "chromium"), ensure_command("/usr/bin/chromedriver",
                                                                           "chromium-driver")
