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


def ensure_gcc_m32() -> None:
    """gcc builds i386 programs (-m32): Debian's gcc-multilib brings the 32-bit runtime and libc."""
    if _builds_m32():
        return
    if shutil.which("apt-get") is None:
        raise DebianBinsError("gcc cannot build i386 programs (-m32) and there is no apt-get to install gcc-multilib")
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _builds_m32():
            refresh_lists_unless_available(["gcc-multilib"])
            run_as_root(["apt-get", "install", "-y", "-q", "--no-install-recommends", "gcc-multilib"])
    if not _builds_m32():
        raise DebianBinsError("apt-get installed gcc-multilib, but gcc -m32 still builds nothing")


def _builds_m32() -> bool:
    import subprocess
    with tempfile.TemporaryDirectory() as where:
        source = Path(where) / "empty.c"
        source.write_text("int main(void) { return 0; }\n")
        done = subprocess.run(["gcc", "-m32", "-static", "-o", str(Path(where) / "empty"), str(source)],
                              capture_output=True)
        return done.returncode == 0
