"""Structures in full, as strace -v prints them (strace 6.x: print_struct_stat() in
print_struct_stat.c, print_statx() in statx.c, uname.c, dirent.c/dirent64.c).

Without -v strace abbreviates these to a few members and `...` (structs.py); with -v every
member is shown in strace's order, times with a `/* ISO 8601 */` comment (sprinttime_nsec():
the fraction only when it is not zero; UTC, the sandbox's only zone). Layouts are the kernel's
x86 ones (arch/x86/include/uapi/asm/stat.h, uapi/linux/stat.h, utsname.h, dirent.h).
"""
import time

from kernel_model.debug.abi import flags

from . import xlat_style
from .strings import MemReader, format_address, quote_from

# name: (offset, size) per layout; st_ino of i386's stat64 is its 64-bit copy at the end.
STAT_FIELDS = {
    "stat64": {"dev": (0, 8), "ino": (8, 8), "nlink": (16, 8), "mode": (24, 4), "uid": (28, 4),
               "gid": (32, 4), "rdev": (40, 8), "size": (48, 8), "blksize": (56, 8),
               "blocks": (64, 8), "atime": (72, 8), "atime_nsec": (80, 8), "mtime": (88, 8),
               "mtime_nsec": (96, 8), "ctime": (104, 8), "ctime_nsec": (112, 8)},
    "stat32": {"dev": (0, 4), "ino": (4, 4), "mode": (8, 2), "nlink": (10, 2), "uid": (12, 2),
               "gid": (14, 2), "rdev": (16, 4), "size": (20, 4), "blksize": (24, 4),
               "blocks": (28, 4), "atime": (32, 4), "atime_nsec": (36, 4), "mtime": (40, 4),
               "mtime_nsec": (44, 4), "ctime": (48, 4), "ctime_nsec": (52, 4)},
    "stat64_i386": {"dev": (0, 8), "mode": (16, 4), "nlink": (20, 4), "uid": (24, 4),
                    "gid": (28, 4), "rdev": (32, 8), "size": (44, 8), "blksize": (52, 4),
                    "blocks": (56, 8), "atime": (64, 4), "atime_nsec": (68, 4), "mtime": (72, 4),
                    "mtime_nsec": (76, 4), "ctime": (80, 4), "ctime_nsec": (84, 4),
                    "ino": (88, 8)},
}
_DEVICE_TYPES = (0o020000, 0o060000)            # S_IFCHR, S_IFBLK: st_rdev instead of st_size
STATX_SIZE = 160
STATX_BTIME, STATX_MNT_ID, STATX_DIOALIGN = 0x800, 0x1000, 0x2000
UTS_FIELDS = ("sysname", "nodename", "release", "version", "machine", "domainname")
UTS_FIELD = 65
DIRENT_TYPES = {0: "DT_UNKNOWN", 1: "DT_FIFO", 2: "DT_CHR", 4: "DT_DIR", 6: "DT_BLK",
                8: "DT_REG", 10: "DT_LNK", 12: "DT_SOCK", 14: "DT_WHT"}


def _int(data: bytes, offset: int, size: int, signed: bool = False) -> int:
    return int.from_bytes(data[offset:offset + size], "little", signed=signed)


def time_comment(seconds: int, nanos: int) -> str:
    """sprinttime_nsec(): `/* 2026-10-17T01:49:21+0000 */`, `.352976643` before the zone when
    the nanoseconds are not zero."""
    try:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    except (OverflowError, OSError, ValueError):
        return ""
    fraction = f".{nanos:09}" if nanos else ""
    return f" /* {text}{fraction}+0000 */"


def makedev(dev: int) -> str:
    """Linux's dev_t split (new_decode_dev): 12-bit major and 20-bit minor, spread out."""
    major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff)
    minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
    return f"makedev({flags.format_hex(major)}, {flags.format_hex(minor)})"


def _id(value: int, size: int) -> str:
    """uid and gid: -1 as -1 (PRINT_FIELD_ID), the others unsigned."""
    return "-1" if value == (1 << 8 * size) - 1 else str(value)


def format_stat_full(mem: MemReader, addr: int, layout: str) -> str:
    fields = STAT_FIELDS[layout]
    end = max(offset + size for offset, size in fields.values())
    data = mem.read(addr, end) if addr else None
    if data is None or len(data) < end:
        return format_address(addr)

    def get(name: str, signed: bool = False) -> int:
        return _int(data, *fields[name], signed=signed)

    mode = get("mode")
    parts = [f"st_dev={makedev(get('dev'))}", f"st_ino={get('ino')}",
             f"st_mode={xlat_style.file_mode(mode)}", f"st_nlink={get('nlink')}",
             f"st_uid={_id(get('uid'), fields['uid'][1])}",
             f"st_gid={_id(get('gid'), fields['gid'][1])}",
             f"st_blksize={get('blksize')}", f"st_blocks={get('blocks')}"]
    parts.append(f"st_rdev={makedev(get('rdev'))}" if (mode & flags.S_IFMT) in _DEVICE_TYPES
                 else f"st_size={get('size', signed=True)}")
    for which in ("atime", "mtime", "ctime"):
        seconds, nanos = get(which, signed=True), get(f"{which}_nsec")
        parts.append(f"st_{which}={seconds}{time_comment(seconds, nanos)}")
        parts.append(f"st_{which}_nsec={nanos}")
    return "{" + ", ".join(parts) + "}"


def _statx_time(data: bytes, offset: int) -> str:
    seconds, nanos = _int(data, offset, 8, signed=True), _int(data, offset + 8, 4)
    return f"{{tv_sec={seconds}, tv_nsec={nanos}}}{time_comment(seconds, nanos)}"


def format_statx_full(mem: MemReader, addr: int) -> str:
    data = mem.read(addr, STATX_SIZE) if addr else None
    if data is None or len(data) < STATX_SIZE:
        return format_address(addr)
    mask = _int(data, 0, 4)
    parts = [f"stx_mask={xlat_style.flag_set(mask, flags.STATX_MASK)}",
             f"stx_blksize={_int(data, 4, 4)}",
             f"stx_attributes={xlat_style.flag_set(_int(data, 8, 8), flags.STATX_ATTRIBUTES)}",
             f"stx_nlink={_int(data, 16, 4)}", f"stx_uid={_id(_int(data, 20, 4), 4)}",
             f"stx_gid={_id(_int(data, 24, 4), 4)}",
             f"stx_mode={xlat_style.file_mode(_int(data, 28, 2))}",
             f"stx_ino={_int(data, 32, 8)}", f"stx_size={_int(data, 40, 8)}",
             f"stx_blocks={_int(data, 48, 8)}",
             f"stx_attributes_mask={xlat_style.flag_set(_int(data, 56, 8), flags.STATX_ATTRIBUTES)}",
             f"stx_atime={_statx_time(data, 64)}"]
    if mask & STATX_BTIME:
        parts.append(f"stx_btime={_statx_time(data, 80)}")
    parts += [f"stx_ctime={_statx_time(data, 96)}", f"stx_mtime={_statx_time(data, 112)}",
              f"stx_rdev_major={_int(data, 128, 4)}", f"stx_rdev_minor={_int(data, 132, 4)}",
              f"stx_dev_major={_int(data, 136, 4)}", f"stx_dev_minor={_int(data, 140, 4)}"]
    if mask & STATX_MNT_ID:
        parts.append(f"stx_mnt_id={_int(data, 144, 8):#x}")
    if mask & STATX_DIOALIGN:
        parts += [f"stx_dio_mem_align={_int(data, 152, 4)}",
                  f"stx_dio_offset_align={_int(data, 156, 4)}"]
    return "{" + ", ".join(parts) + "}"


def format_utsname_full(mem: MemReader, addr: int) -> str:
    size = len(UTS_FIELDS) * UTS_FIELD
    data = mem.read(addr, size) if addr else None
    if data is None or len(data) < size:
        return format_address(addr)
    values = (data[i * UTS_FIELD:(i + 1) * UTS_FIELD].split(b"\0", 1)[0]
              for i in range(len(UTS_FIELDS)))
    return "{" + ", ".join(f"{name}={quote_from(mem, value)}"
                           for name, value in zip(UTS_FIELDS, values)) + "}"


def format_dirents_full(mem: MemReader, addr: int, size: int, word: int | None) -> str:
    """Each record: getdents64's linux_dirent64 (word None: u64 d_ino and d_off, d_type before
    the name) or getdents' linux_dirent (`word`-sized d_ino and d_off, d_type in the record's
    last byte, printed after the name)."""
    data = mem.read(addr, size) if size > 0 else b""
    if data is None:
        return format_address(addr)
    field = 8 if word is None else word
    reclen_at = 2 * field
    entries, offset = [], 0
    while offset + reclen_at + 2 <= len(data):
        reclen = _int(data, offset + reclen_at, 2)
        if reclen == 0 or offset + reclen > len(data):
            break
        record = data[offset:offset + reclen]
        ino, off = _int(record, 0, field), _int(record, field, field, signed=word is None)
        head = f"{{d_ino={ino}, d_off={off}, d_reclen={reclen}, "
        if word is None:
            kind, name = record[reclen_at + 2], _name(mem, record[reclen_at + 3:])
            entries.append(head + f"d_type={_dirent_type(kind)}, d_name={name}}}")
        else:
            kind, name = record[-1], _name(mem, record[reclen_at + 2:-1])
            entries.append(head + f"d_name={name}, d_type={_dirent_type(kind)}}}")
        offset += reclen
    return "[" + ", ".join(entries) + "]"


def _name(mem, field: bytes) -> str:
    return quote_from(mem, field.split(b"\0", 1)[0])


def _dirent_type(kind: int) -> str:
    return DIRENT_TYPES.get(kind, f"{kind:#x} /* DT_??? */")
