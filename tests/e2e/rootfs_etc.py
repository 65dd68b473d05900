"""The files a Debian userland expects that package maintainer scripts would have made.

deb_extract.py unpacks files only; on a real system the postinst scripts of libc-bin
(nsswitch.conf from its default, ``ldconfig``), base-passwd (/etc/passwd, /etc/group) and
debootstrap (/dev, /proc, /tmp, /root) fill in the rest. This module does the same, with
fixed contents and mtimes so that ``ls -l /etc`` or ``id`` print the same on every machine.

The loader cache is built by the rootfs's own ldconfig (libc-bin's, statically linked)
run natively inside the rootfs, as libc-bin's postinst runs ``ldconfig -r $DPKG_ROOT``:
the cache then holds exactly this rootfs's libraries and its hwcaps, for its arch.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.e2e.native_oracle import run_in_rootfs

# 2021-01-02 03:04:05 UTC, as for the static rootfs (tests/e2e/conftest.py).
FIXED_MTIME = 1609556645

# base-passwd's master files (Debian 12), trimmed to the entries a test can meet, plus
# one ordinary user so that `id user` and `ls -l` of a file owned by uid 1000 name someone.
PASSWD = """\
root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
bin:x:2:2:bin:/bin:/usr/sbin/nologin
sys:x:3:3:sys:/dev:/usr/sbin/nologin
mail:x:8:8:mail:/var/mail:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
user:x:1000:1000:Test User,,,:/home/user:/bin/bash
"""

GROUP = """\
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
mail:x:8:
staff:x:50:
users:x:100:user
nogroup:x:65534:
user:x:1000:
"""

HOSTS = """\
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
"""

# (path, mode) of the folders debootstrap leaves empty: mount points and scratch space.
SKELETON = (
    ("dev", 0o755), ("proc", 0o755), ("sys", 0o755), ("run", 0o755), ("tmp", 0o1777),
    ("root", 0o700), ("home/user", 0o755), ("var/tmp", 0o1777),
)


# The update-alternatives links the closure's postinst scripts make (gawk: awk and nawk;
# debianutils: which), as /usr/bin/NAME -> /etc/alternatives/NAME -> the real program.
ALTERNATIVES = (
    ("/usr/bin/awk", "awk", "/usr/bin/gawk"),
    ("/usr/bin/nawk", "nawk", "/usr/bin/gawk"),
    ("/usr/bin/which", "which", "/usr/bin/which.debianutils"),
)


class RootfsEtcError(RuntimeError):
    """The rootfs's own tools failed while finishing it; the message has their output."""


def finish_rootfs(root: Path) -> None:
    """Skeleton folders, /etc files, then ld.so.cache (which needs /dev and /proc)."""
    for relative, mode in SKELETON:
        folder = root / relative
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(mode)
    etc = root / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text(PASSWD)
    (etc / "group").write_text(GROUP)
    (etc / "hosts").write_text(HOSTS)
    # libc-bin's postinst: install_from_default /usr/share/libc-bin/nsswitch.conf.
    shutil.copyfile(root / "usr/share/libc-bin/nsswitch.conf", etc / "nsswitch.conf")
    make_alternatives(root)
    build_loader_cache(root)
    fix_mtimes(root)


def make_alternatives(root: Path) -> None:
    (root / "etc/alternatives").mkdir(exist_ok=True)
    for link, name, target in ALTERNATIVES:
        if not (root / target.lstrip("/")).is_file():
            raise RootfsEtcError(f"alternative {name}: {target} is not in the rootfs")
        (root / "etc/alternatives" / name).symlink_to(target)
        (root / link.lstrip("/")).symlink_to(f"/etc/alternatives/{name}")


def build_loader_cache(root: Path) -> None:
    """/etc/ld.so.cache from the rootfs's own /sbin/ldconfig, run inside the rootfs."""
    done = run_in_rootfs(["/sbin/ldconfig"], root=root, read_only=False)
    if done.returncode != 0 or not (root / "etc/ld.so.cache").is_file():
        raise RootfsEtcError(f"building /etc/ld.so.cache failed:\n{done.describe()}")
    # ldconfig's auxiliary cache records inode numbers and ctimes of this host: drop it
    # so nothing host-specific stays in the rootfs.
    aux = root / "var/cache/ldconfig/aux-cache"
    if aux.exists():
        aux.unlink()


def fix_mtimes(root: Path) -> None:
    """Fixed mtimes for what this module wrote, every folder and every symlink (regular
    files keep the package's own mtimes, which are deterministic already; tarfile does
    not set a symlink's, so those carry the time of extraction)."""
    for relative in ("etc/passwd", "etc/group", "etc/hosts", "etc/nsswitch.conf",
                     "etc/ld.so.cache"):
        os.utime(root / relative, (FIXED_MTIME, FIXED_MTIME))
    # Bottom-up, so that setting a child's time does not disturb its parent's afterwards.
    for folder, dirs, files in os.walk(root, topdown=False):
        for name in dirs + [f for f in files if os.path.islink(os.path.join(folder, f))]:
            os.utime(Path(folder) / name, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
    os.utime(root, (FIXED_MTIME, FIXED_MTIME))
