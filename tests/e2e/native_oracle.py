"""The native reference runs for dynamically linked programs: in a Debian rootfs, or on the host.

Choice of oracle (issue 14): the program runs natively, chrooted into the very rootfs folder
trapline gets with ``--rootfs``, inside a private mount namespace:

- the rootfs is bind-mounted onto itself read-only, so no native run can change the shared,
  cached rootfs (trapline's default in-memory overlay does the same on its side);
- a fresh tmpfs is mounted on its /tmp, where a test's commands may write (trapline's
  overlay lets the guest write there too, and the writes vanish with the run);
- the host's /dev and /proc are bind-mounted onto the rootfs' empty /dev and /proc.

The dynamic loader, libraries, /etc files, locale and gconv data are then all the rootfs'
own, at the paths the guest sees, and programs that exec others (shells, xargs, find
-exec, tar -z) or read /etc (id, getent, ls -l) behave as on a Debian 12 system. That is
more faithful than the alternatives: ``ld.so --library-path ROOT/... ROOT/usr/bin/X`` only
redirects the first program's libraries (not a child's, not /etc, and argv[0] and
/proc/self/exe differ), and ``qemu-i386 -L ROOT`` resolves absolute paths against ROOT only
when the file exists there and is a second emulator, not the hardware.

Root does this directly (the dev container and CI run as root); a non-root user gets it
through an unprivileged user namespace mapped to uid 0. Limits: the i386 rootfs needs the
host kernel to run i386 programs (ia32 emulation, enabled on Debian's amd64 kernels; on a
host without it, ``apt-get install qemu-user-static`` registers a binfmt handler with the
F flag, which also works inside the chroot); readdir order is the host file system's,
so tests sort listings (``find``, ``ls -U``) before comparing; the kernel, hence uname and
/proc contents, is the host's.

``run_host`` is the oracle for programs of the host's own / (trapline's default root):
the same launcher without namespace or chroot, for the same environment and signal
dispositions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.sandbox_runner import FIXED_ENV, Result, _run

_LAUNCHER = r"""
import ctypes, json, os, signal, sys
config = json.loads(sys.argv[1])
argv = sys.argv[2:]
root = config["root"]
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x1, 0x20, 0x1000, 0x4000, 0x40000
def check(status, what):
    if status != 0:
        errno = ctypes.get_errno()
        sys.exit(f"native launcher: {what}: {os.strerror(errno)}")
def mount(source, target, fstype, flags, data, what):
    check(libc.mount(source.encode(), target.encode(), fstype and fstype.encode(), flags,
                     data and data.encode()), what)
if root != "/":
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    else:
        check(libc.unshare(CLONE_NEWNS | CLONE_NEWUSER), "unshare(CLONE_NEWUSER) (not root)")
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                           ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    mount("none", "/", None, MS_REC | MS_PRIVATE, None, "make / private")
    mount(root, root, None, MS_BIND, None, "bind the rootfs onto itself")
    if config["private_tmp"]:
        mount("tmpfs", os.path.join(root, "tmp"), "tmpfs", 0, "mode=1777", "tmpfs on /tmp")
    for entry in ("dev", "proc"):
        mount("/" + entry, os.path.join(root, entry), None, MS_BIND | MS_REC, None,
              f"bind /{entry}")
    if config["read_only"]:
        # A user namespace may not drop the flags its mount was made with (nosuid, nodev,
        # noexec, atime): keep them on the remount (statvfs's ST_ bits equal the MS_ ones,
        # except relatime).
        kept = os.statvfs(root).f_flag & (0x2 | 0x4 | 0x8 | 0x400 | 0x800)
        if os.statvfs(root).f_flag & 0x1000:
            kept |= 1 << 21
        mount("none", root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None,
              "rootfs read-only")
    os.chroot(root)
os.chdir(config["cwd"])
os.umask(0o022)
# Python starts with SIGPIPE ignored and exec keeps ignored signals: give the reference run
# the default disposition a shell-started program has (pipelines like `yes | head` need it).
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
try:
    os.execve(argv[0], argv, config["env"])
except OSError as error:
    sys.exit(f"native launcher: execve {argv[0]}: {error.strerror}")
"""


def run_in_rootfs(
    argv: list[str],
    *,
    root: Path,
    cwd: str = "/",
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    read_only: bool = True,
    timeout: float = 60,
) -> Result:
    """Run ``argv`` (argv[0] a path inside ``root``) natively, chrooted into ``root``.

    ``read_only=False`` is for building the rootfs itself (its own ldconfig writes
    /etc/ld.so.cache); every test run keeps the default.
    """
    config = {"root": str(Path(root).resolve()), "cwd": cwd,
              "env": FIXED_ENV if env is None else env,
              "read_only": read_only, "private_tmp": read_only}
    return _launch(argv, config, stdin, timeout)


def run_host(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    timeout: float = 60,
) -> Result:
    """Run a program of the host's own / natively (the oracle for trapline's default root)."""
    config = {"root": "/", "cwd": cwd, "env": FIXED_ENV if env is None else env}
    return _launch(argv, config, stdin, timeout)


def _launch(argv: list[str], config: dict, stdin: bytes, timeout: float) -> Result:
    command = [sys.executable, "-I", "-c", _LAUNCHER, json.dumps(config), *argv]
    return _run("native", argv, command, stdin, timeout, cwd="/", env={})
