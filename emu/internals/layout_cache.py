"""The located layout kept on disk for the next process, confirmed before it is used.

Locating Unicorn's private fields (located()) scans its structures through /proc/self/mem and is
a noticeable part of a start-up's CPU (bench/startup.py), the same answer every time for the
same library. It is kept in the user's cache directory (beside emu/native's compiled helpers),
named by the identity of the loaded libunicorn (path, size, mtime) and of this interpreter; a
process that finds it still runs confirmed() on it (cheaper than locating: every field is
checked again on fresh Ucs) and takes it only if every field holds, otherwise it locates afresh
and writes the file again. A missing, unreadable or malformed file is the same as none; one that
cannot be written is not kept.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .binding import uclib
from .cpu_env import EnvLayout

FORMAT = 1
BITS = (32, 64)
# The file: the identity it was found for, then every field as a number or "-" (not located).
# Plain text rather than JSON: importing json cost a start-up more than reading this.


def _identity() -> str | None:
    try:
        st = os.stat(uclib._name)
    except (OSError, TypeError):
        return None
    return f"{FORMAT} {uclib._name} {st.st_size} {st.st_mtime_ns} {sys.version.split()[0]}"


def _path(identity: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = f"layout-{sys.version_info[0]}{sys.version_info[1]}-{abs(hash_text(identity)):016x}.txt"
    return Path(base) / "trapline" / "unicorn" / name


def hash_text(text: str) -> int:
    """A hash of `text` stable across processes (str's hash() is salted per process): FNV-1a."""
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFF_FFFF_FFFF_FFFF
    return value


def _fields(layout) -> list[int | None]:
    env = layout.cpu_env
    env_fields = [None] * 4 if env is None else [env.cpu_pointer, env.env_distance, env.eip_offset,
                                                 env.cs_offset]
    return env_fields + [layout.emu_counter, layout.invalid_addr] + \
        [layout.old_exception[bits] for bits in BITS] + [layout.exception_is_int[bits] for bits in BITS]


def load(layout_type):
    """The kept layout (an instance of `layout_type`, emu.internals.Layout), or None."""
    identity = _identity()
    if identity is None:
        return None
    try:
        kept_identity, numbers = _path(identity).read_text().split("\n")[:2]
        if kept_identity != identity:
            return None
        f = [None if word == "-" else int(word) for word in numbers.split()]
        if len(f) != 10:
            return None
    except (OSError, ValueError):
        return None
    env = None if None in f[:4] else EnvLayout(*f[:4])
    return layout_type(cpu_env=env, emu_counter=f[4], invalid_addr=f[5],
                       old_exception=dict(zip(BITS, f[6:8])), exception_is_int=dict(zip(BITS, f[8:10])))


def store(layout) -> None:
    """Write `layout` for the next process (atomically: a reader never sees half a file)."""
    identity = _identity()
    if identity is None:
        return
    path = _path(identity)
    text = identity + "\n" + " ".join("-" if v is None else str(v) for v in _fields(layout)) + "\n"
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(text)
        os.replace(partial, path)
    except OSError:
        try:
            partial.unlink()
        except OSError:
            pass
