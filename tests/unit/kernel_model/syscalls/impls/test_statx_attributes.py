"""statx's stx_attributes and stx_attributes_mask (both ABIs), as the reference host answers
(strace -v, busybox ls in a rootfs bound on itself, /proc and a devtmpfs /dev mounted in it):
STATX_ATTR_MOUNT_ROOT on the root of each mount and nowhere else; the mask is every file's
(automount, mount root, dax) and the file system's own (ext4's six for the rootfs, tmpfs's
three for /dev and /dev/shm, none for procfs and pipes)."""
import struct

from ...call_script import run_script

AT_FDCWD, STATX_BASIC_STATS = -100, 0x7FF
AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = 0x100, 0x1000
COMPRESSED, IMMUTABLE, APPEND, NODUMP, ENCRYPTED = 0x4, 0x10, 0x20, 0x40, 0x800
AUTOMOUNT, MOUNT_ROOT, VERITY, DAX = 0x1000, 0x2000, 0x100000, 0x200000
EVERY_FILE = AUTOMOUNT | MOUNT_ROOT | DAX
EXT4 = EVERY_FILE | COMPRESSED | IMMUTABLE | APPEND | NODUMP | ENCRYPTED | VERITY
TMPFS = EVERY_FILE | IMMUTABLE | APPEND | NODUMP

# path -> (stx_attributes, stx_attributes_mask), measured natively
EXPECTED = {"/": (MOUNT_ROOT, EXT4), "/etc": (0, EXT4), "/etc/passwd": (0, EXT4),
            "/proc": (MOUNT_ROOT, EVERY_FILE), "/proc/self": (0, EVERY_FILE),
            "/dev": (MOUNT_ROOT, TMPFS), "/dev/null": (0, TMPFS), "/dev/shm": (MOUNT_ROOT, TMPFS)}


def _attributes(buf: bytes, at: int) -> tuple[int, int]:
    return struct.unpack_from("<Q", buf, at + 8)[0], struct.unpack_from("<Q", buf, at + 0x38)[0]


def test_mount_roots_and_each_file_systems_mask(arch, tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_bytes(b"root:x:0:0::/:/bin/sh\n")
    names, places = bytearray(), []
    for path in EXPECTED:                       # the paths after the answers, in BUF
        places.append(NAMES_AT + len(names))
        names += path.encode() + b"\0"
    calls = [("statx", AT_FDCWD, f"BUF+{place}", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
              f"BUF+{256 * i}") for i, place in enumerate(places)]
    calls.append(("pipe", f"BUF+{PIPE_AT}"))
    calls.append(("statx", 3, "", AT_EMPTY_PATH, STATX_BASIC_STATS, f"BUF+{PIPE_ANSWER}"))
    data = bytes(NAMES_AT) + bytes(names)
    results, buf, _ = run_script(arch, calls, data=data, rootfs=root)
    assert results == [0] * len(results)
    seen = {path: _attributes(buf, 256 * i) for i, path in enumerate(EXPECTED)}
    assert seen == EXPECTED
    assert _attributes(buf, PIPE_ANSWER) == (0, EVERY_FILE)                  # pipefs


PIPE_ANSWER, PIPE_AT, NAMES_AT = 256 * len(EXPECTED), 256 * len(EXPECTED) + 256, 2400
