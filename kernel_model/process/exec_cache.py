"""The bytes of executables exec has read, kept by the identity of their host file.

A shell loop execs the same 2 MB busybox again and again; Linux keeps it in the page cache,
and here exec read it whole each time (then loader.elf compared it whole with the image it
had built). The bytes are kept by the host file's identity instead: device, inode, size, and
modification and change times (the host's stat; `st_ctime` cannot be set by utime(2), and
every write changes it). An exec whose file still has that identity gets the same bytes
object without reading, and loader.elf, finding the very object it parsed, reuses its image.

Where the identity can lie, the file is read as before:
  * a file whose change time is recent: Linux stamps inodes with a coarse clock (fs/inode.c
    current_time(), one tick of the timer interrupt), so two writes within a tick of the
    stamp leave the same times; a file is kept only once its change time is older than
    RACY_NS (what git calls a racily clean entry);
  * files that are not plain host files: the overlay's in-memory copies (their times are
    the virtual clock's, which a guest can set back with utimensat), /proc, devices.
The host clock only decides what is kept, never what a guest sees. Bounded by entries and
bytes, least recently used first out.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from stat import S_ISREG

MAX_ENTRIES = 16
MAX_BYTES = 64 << 20
RACY_NS = 2_000_000_000     # far more than a timer tick (CONFIG_HZ >= 100: <= 10 ms)

_kept: OrderedDict[tuple, bytes] = OrderedDict()
host_now_ns = time.time_ns     # the host clock the file times are stamped from (tests model it)


def host_identity(node) -> tuple | None:
    """(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns) of the host file whose bytes the
    node reads as they are, or None where there is none or it is too recent to trust."""
    host = _host_backing(node)
    if host is None:
        return None
    st = host.host_stat()
    if st.st_ctime_ns > host_now_ns() - RACY_NS:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _host_backing(node):
    """The host node whose bytes `node` reads: itself for a host file, the lower file of an
    overlay file not yet copied up; None for anything else."""
    if getattr(node, "data", None) is not None:       # an overlay copy: the guest's own bytes
        return None
    node = getattr(node, "lower", None) or node
    if not callable(getattr(node, "can_host_stat", None)) or not node.can_host_stat():
        return None                                   # not a host file, or reachable only by fd
    return node if S_ISREG(node.first_stat.st_mode) else None


def read_through(node, read) -> bytes:
    """The file's bytes: the kept ones while its identity holds, else `read()`'s (kept when
    the identity was the same before and after the read)."""
    identity = host_identity(node)
    if identity is not None:
        data = _kept.get(identity)
        if data is not None:
            _kept.move_to_end(identity)
            return data
    data = read()
    if identity is not None and len(data) == identity[2] and host_identity(node) == identity:
        _remember(identity, data)
    return data


def _remember(identity: tuple, data: bytes) -> None:
    if len(data) > MAX_BYTES:
        return
    _kept[identity] = data
    total = sum(len(kept) for kept in _kept.values())
    while len(_kept) > MAX_ENTRIES or total > MAX_BYTES:
        _, dropped = _kept.popitem(last=False)
        total -= len(dropped)


def forget() -> None:
    """Drop every kept file (tests, benchmarks)."""
    _kept.clear()

