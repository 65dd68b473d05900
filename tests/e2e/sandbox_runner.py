"""Run one program in the trapline sandbox and, for reference, natively on the host.

Both runs see the same files at the same paths and the same explicit environment, so
their stdout, stderr and exit status can be compared byte for byte.

How the native run gets identical paths: the binaries under test are static, so the
simplest faithful reference is to chroot into the very rootfs folder given to trapline.
A tiny launcher (a fresh ``python -c`` process, so nothing runs between fork and exec
in the multi-threaded pytest process) enters a private mount namespace, bind-mounts the
host's /dev and /proc onto the rootfs' empty /dev and /proc (busybox needs /dev/null,
/dev/stdout and, for applets that re-exec themselves, /proc/self/exe), chroots, chdirs,
sets the Linux default umask 022 and execs the program. Root can do all of this
directly; a non-root user gets the same through an unprivileged user namespace
(mapped to uid 0), which most distributions allow. The bind mounts vanish with the
namespace, so the rootfs folder never holds a mount after the run.
"""

from __future__ import annotations

import difflib
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.forkserver import run_trapline

REPO_ROOT = Path(__file__).resolve().parents[2]

# The environment both sides get (passed with --clear-env on the sandbox side). TZ is
# fixed so that date and ls --full-time print the same clock on any host.
FIXED_ENV = {"PATH": "/bin:/usr/bin", "HOME": "/", "LANG": "C", "TZ": "UTC"}


@dataclass(frozen=True)
class Result:
    """What a run produced; ``argv`` and ``side`` make failure messages self-explaining."""

    side: str
    argv: tuple[str, ...]
    stdout: bytes
    stderr: bytes
    returncode: int
    command: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def describe(self) -> str:
        return (
            f"{self.side} run of {list(self.argv)}: exit status {self.returncode}\n"
            f"  stdout: {_excerpt(self.stdout, 1500)}\n  stderr: {_excerpt(self.stderr, 1500)}"
        )


class RunTimeout(AssertionError):
    """A run exceeded its timeout (an emulator hang shows up here, not as a stuck CI)."""


def run_sandbox(
    argv: list[str],
    *,
    rootfs: Path | None,
    cwd: str = "/",
    env: dict[str, str] | None = None,
    clear_env: bool = False,
    stdin: bytes = b"",
    seed: int = 0,
    writable: bool = False,
    strace: bool = False,
    timeout: float = 120,
) -> Result:
    """``python -m trapline run ... -- argv`` with the host's stdio captured.

    ``rootfs=None`` runs against the host root (read-only); ``env`` entries are passed
    with ``-E K=V`` in dict order, which is the order the guest's envp must have.
    """
    command = [sys.executable, "-m", "trapline", "run"]
    if rootfs is not None:
        command += ["--rootfs", str(rootfs)]
    command += ["--cwd", cwd, "--seed", str(seed)]
    if clear_env:
        command.append("--clear-env")
    for key, value in (env or {}).items():
        command += ["-E", f"{key}={value}"]
    if writable:
        command.append("--writable")
    if strace:
        command.append("--strace")
    command += ["--", *argv]
    # Forked from the warm trapline process where it can (forkserver.py): the same stdio
    # pipes, working folder, environment and exit status, without the interpreter's start-up.
    try:
        done = run_trapline(command[3:], input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        raise _timeout("sandbox", argv, command, timeout, expired) from None
    return Result("sandbox", tuple(argv), done.stdout, done.stderr, done.returncode, tuple(command))


_NATIVE_LAUNCHER = r"""
import ctypes, json, os, signal, sys
root, cwd, env_json, *argv = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
def check(status, what):
    if status != 0:
        errno = ctypes.get_errno()
        sys.exit(f"native launcher: {what}: {os.strerror(errno)}")
uid, gid = os.getuid(), os.getgid()
if uid == 0:
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
else:
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWUSER), "unshare(CLONE_NEWUSER) (not root)")
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
for entry in ("dev", "proc"):
    target = os.path.join(root, entry).encode()
    check(libc.mount(b"/" + entry.encode(), target, None, MS_BIND | MS_REC, None), f"bind /{entry}")
os.chroot(root)
os.chdir(cwd)
os.umask(0o022)
# Python starts with SIGPIPE ignored and exec keeps ignored signals: give the reference run
# the default disposition a shell-started program has (pipelines like `yes | head` need it).
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
os.execve(argv[0], argv, json.loads(env_json))
"""


def run_native(
    argv: list[str],
    *,
    rootfs_dir: Path,
    cwd: str = "/",
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    timeout: float = 60,
) -> Result:
    """Run ``argv`` (argv[0] = path inside the rootfs) chrooted into ``rootfs_dir``.

    ``rootfs_dir`` must contain empty ``dev`` and ``proc`` folders (mount points).
    """
    environment = FIXED_ENV if env is None else env
    command = [
        sys.executable, "-I", "-c", _NATIVE_LAUNCHER,
        str(rootfs_dir), cwd, json.dumps(environment), *argv,
    ]
    return _run("native", argv, command, stdin, timeout, cwd=rootfs_dir, env={})


def _run(side, argv, command, stdin, timeout, *, cwd, env=None) -> Result:
    try:
        done = subprocess.run(
            command, input=stdin, capture_output=True, timeout=timeout, cwd=cwd, env=env
        )
    except subprocess.TimeoutExpired as expired:
        raise _timeout(side, argv, command, timeout, expired) from None
    return Result(side, tuple(argv), done.stdout, done.stderr, done.returncode, tuple(command))


def _timeout(side, argv, command, timeout, expired) -> RunTimeout:
    return RunTimeout(
        f"{side} run of {list(argv)} exceeded {timeout}s\n"
        f"command: {_shell_words(command)}\n"
        f"stdout so far: {_excerpt(expired.stdout or b'')}\n"
        f"stderr so far: {_excerpt(expired.stderr or b'')}"
    )


def check_native_oracle(native: Result, expected_status: int) -> None:
    """The reference run must itself do what the test expects, or the comparison is moot."""
    if native.returncode != expected_status:
        raise AssertionError(
            f"native reference broke (expected exit status {expected_status}); "
            f"the test or the host setup is wrong, not trapline:\n{native.describe()}"
        )


def compare_results(
    sandbox: Result, native: Result, *, stdout: bool = True, stderr: bool = True
) -> list[str]:
    """The differences between two runs, one readable paragraph each (empty: same)."""
    problems = []
    if sandbox.returncode != native.returncode:
        problems.append(
            f"exit status differs: sandbox {sandbox.returncode}, native {native.returncode}"
        )
    if stdout and sandbox.stdout != native.stdout:
        problems.append("stdout differs:\n" + describe_difference(native.stdout, sandbox.stdout))
    if stderr and sandbox.stderr != native.stderr:
        problems.append("stderr differs:\n" + describe_difference(native.stderr, sandbox.stderr))
    return problems


def assert_same_behaviour(
    sandbox: Result, native: Result, *, stdout: bool = True, stderr: bool = True
) -> None:
    """Fail with exit codes, a diff of stdout/stderr and both commands when they differ."""
    problems = compare_results(sandbox, native, stdout=stdout, stderr=stderr)
    if problems:
        raise AssertionError(failure_report(sandbox, native, problems))


def failure_report(sandbox: Result, native: Result, problems: list[str]) -> str:
    lines = [
        f"guest argv: {list(sandbox.argv)}",
        f"exit status: sandbox {sandbox.returncode}, native {native.returncode}",
        *(p for p in problems if not p.startswith("exit status")),
    ]
    if sandbox.stderr and not any(p.startswith("stderr") for p in problems):
        lines.append(f"sandbox stderr (not compared): {_excerpt(sandbox.stderr)}")
    lines.append(f"sandbox command: {_shell_words(sandbox.command)}")
    return "\n".join(lines)


def describe_difference(expected: bytes, actual: bytes) -> str:
    """A unified diff (native = expected) for text, offsets and hashes for binary data."""
    if _looks_textual(expected) and _looks_textual(actual):
        diff = difflib.unified_diff(
            expected.decode("utf-8", "backslashreplace").splitlines(keepends=True),
            actual.decode("utf-8", "backslashreplace").splitlines(keepends=True),
            fromfile="native", tofile="sandbox",
        )
        text = "".join(line if line.endswith("\n") else line + "\n\\ no newline\n" for line in diff)
        return _truncate(text, 6000)
    first = next(
        (i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
        min(len(expected), len(actual)),
    )
    return (
        f"  binary data: native {len(expected)} bytes, sandbox {len(actual)} bytes, "
        f"first difference at offset {first}\n"
        f"  native  [{first}:+32]: {expected[first:first + 32].hex(' ')}\n"
        f"  sandbox [{first}:+32]: {actual[first:first + 32].hex(' ')}\n"
    )


def _looks_textual(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _excerpt(data: bytes, limit: int = 3000) -> str:
    return _truncate(data.decode("utf-8", "backslashreplace"), limit) or "(empty)"


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _shell_words(command) -> str:
    # The native launcher's source is a multi-line argument; name it instead of printing it.
    words = ("<native-launcher>" if "\n" in str(w) else shlex.quote(str(w)) for w in command)
    return " ".join(words)
