"""Unpack a Debian package into a merged-/usr root, as dpkg on Debian 12 leaves it.

A Debian 12 system is merged-/usr: /bin, /sbin and /lib* are symlinks into /usr, while the
packages themselves still ship files under ./bin, ./lib, ./lib64 (the usrmerge package, or
debootstrap, makes the links at install time). ``dpkg-deb -x`` would create real /bin and
/lib folders instead, so the data archive is read from ``dpkg-deb --fsys-tarfile`` and each
member's path is redirected into /usr here. That keeps both spellings valid, as on a real
system: ``/bin/ls`` and ``/usr/bin/ls``, the ELF interpreter ``/lib64/ld-linux-x86-64.so.2``
and ``/usr/lib/x86_64-linux-gnu/libc.so.6``.

Only the standard library is used (fetch_debian_bins.py runs before the project is
installed). Maintainer scripts are not run: what they would create (ld.so.cache,
/etc/passwd, nsswitch.conf) is written by rootfs_etc.py.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path, PurePosixPath

# The top-level folders Debian 12 merges into /usr (usrmerge's list for x86).
MERGED_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


class DebExtractError(RuntimeError):
    """A package could not be unpacked; the message names the package and the path."""


def merged_path(archive_name: str) -> str:
    """'./bin/ls' -> 'usr/bin/ls'; './etc/x' -> 'etc/x'; './' -> ''."""
    parts = PurePosixPath(archive_name.lstrip("/")).parts
    parts = tuple(part for part in parts if part != ".")
    if parts and parts[0] in MERGED_TOP_LEVEL:
        parts = ("usr", *parts)
    return "/".join(parts)


def extract_deb(deb: Path, root: Path) -> list[str]:
    """Unpack ``deb``'s files under ``root`` (merged-/usr); return the paths it installed.

    Two packages of a closure never ship the same non-folder path (dpkg would refuse), so
    finding one already there means the closure or the merge is wrong: that is an error,
    not something to overwrite silently.
    """
    data = _fsys_tarfile(deb)
    installed = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in archive:
            name = merged_path(member.name)
            if not name:
                continue
            target = root / name
            if not member.isdir() and os.path.lexists(target):
                raise DebExtractError(f"{deb.name}: /{name} is already installed by another package")
            member.name = name
            if member.islnk():
                member.linkname = merged_path(member.linkname)
            # "tar" filter: no absolute or escaping member names, no device files, no
            # setuid bits. Symlink targets are kept as shipped (absolute ones included:
            # they are resolved inside the guest root, by trapline and by the chroot).
            archive.extract(member, root, filter="tar")
            installed.append("/" + name)
    return installed


def make_merged_links(root: Path) -> None:
    """/bin -> usr/bin and friends, for every merged folder that some package filled."""
    for top in MERGED_TOP_LEVEL:
        link = root / top
        if (root / "usr" / top).is_dir() and not os.path.lexists(link):
            link.symlink_to(f"usr/{top}")


def _fsys_tarfile(deb: Path) -> bytes:
    try:
        done = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True)
    except OSError as error:
        raise DebExtractError(f"cannot run dpkg-deb: {error}") from error
    if done.returncode != 0:
        raise DebExtractError(
            f"dpkg-deb --fsys-tarfile {deb.name} failed: {done.stderr.decode(errors='replace')}"
        )
    return done.stdout
