"""Flag decoding in strace's spelling and order (checked against strace 6.1 output)."""
import pytest

from kernel_model import flags


@pytest.mark.parametrize("value,text", [
    (0, "O_RDONLY"),
    (flags.O_RDONLY | flags.O_CLOEXEC, "O_RDONLY|O_CLOEXEC"),
    (flags.O_RDONLY | 0x4000000, "O_RDONLY|0x4000000"),
    (flags.O_WRONLY | flags.O_CREAT | flags.O_TRUNC, "O_WRONLY|O_CREAT|O_TRUNC"),
    (flags.O_WRONLY | flags.O_CREAT | flags.O_EXCL | flags.O_NOCTTY | flags.O_TRUNC
     | flags.O_APPEND | flags.O_NONBLOCK | flags.O_SYNC | flags.FASYNC | flags.O_DIRECT
     | flags.O_NOFOLLOW | flags.O_NOATIME | flags.O_CLOEXEC,
     "O_WRONLY|O_CREAT|O_EXCL|O_NOCTTY|O_TRUNC|O_APPEND|O_NONBLOCK|O_SYNC|O_DIRECT|"
     "O_NOFOLLOW|O_NOATIME|O_CLOEXEC|FASYNC"),
    (flags.O_RDWR | flags.O_TMPFILE, "O_RDWR|O_TMPFILE"),
    (flags.O_DSYNC | flags.O_PATH | flags.O_DIRECTORY, "O_RDONLY|O_DSYNC|O_PATH|O_DIRECTORY"),
    (flags.O_DIRECT | flags.O_LARGEFILE | flags.O_PATH | flags.O_DIRECTORY,
     "O_RDONLY|O_DIRECT|O_LARGEFILE|O_PATH|O_DIRECTORY"),
    (flags.O_RDWR | flags.O_LARGEFILE | flags.O_DIRECTORY | flags.O_NOFOLLOW | flags.O_CLOEXEC,
     "O_RDWR|O_LARGEFILE|O_NOFOLLOW|O_CLOEXEC|O_DIRECTORY"),
    (flags.O_DIRECTORY | flags.O_DIRECT | flags.O_NOATIME | flags.O_CLOEXEC | flags.O_PATH,
     "O_RDONLY|O_DIRECT|O_NOATIME|O_CLOEXEC|O_PATH|O_DIRECTORY"),
    (3, "O_ACCMODE"),
])
def test_open_flags(value, text):
    assert flags.decode_open_flags(value) == text


def test_open_flag_values_match_linux_x86():
    assert (flags.O_CREAT, flags.O_EXCL, flags.O_TRUNC, flags.O_APPEND) == (
        0o100, 0o200, 0o1000, 0o2000)
    assert (flags.O_NONBLOCK, flags.O_LARGEFILE, flags.O_DIRECTORY, flags.O_CLOEXEC) == (
        0o4000, 0o100000, 0o200000, 0o2000000)
    assert (flags.O_PATH, flags.O_TMPFILE) == (0o10000000, 0o20200000)


@pytest.mark.parametrize("value,text", [
    (0, "PROT_NONE"), (3, "PROT_READ|PROT_WRITE"), (5, "PROT_READ|PROT_EXEC"),
    (0x105, "PROT_READ|PROT_EXEC|0x100"), (0x01000009, "PROT_READ|PROT_SEM|PROT_GROWSDOWN"),
])
def test_prot(value, text):
    assert flags.decode_prot(value) == text


@pytest.mark.parametrize("value,text", [
    (0x22, "MAP_PRIVATE|MAP_ANONYMOUS"),
    (0x812, "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE"),
    (0x0, "MAP_FILE"), (0x3, "MAP_SHARED_VALIDATE"),
    (0x80128001, "MAP_SHARED|MAP_POPULATE|MAP_STACK|MAP_FIXED_NOREPLACE|32<<MAP_HUGE_SHIFT"),
    (0x40000 | 0x80000 | 0x4000 | 0x10000 | 0x100 | 0x1000 | 0x2000 | 0x62,
     "MAP_PRIVATE|MAP_ANONYMOUS|MAP_32BIT|MAP_NORESERVE|MAP_NONBLOCK|MAP_GROWSDOWN|"
     "MAP_EXECUTABLE|MAP_LOCKED|MAP_HUGETLB|MAP_SYNC"),
    (0xf, "0xf /* MAP_??? */"),
])
def test_map_flags(value, text):
    assert flags.decode_map_flags(value) == text


@pytest.mark.parametrize("decode,value,text", [
    (flags.decode_at_flags, 0, "0"),
    (flags.decode_at_flags, 0x1000, "AT_EMPTY_PATH"),
    (flags.decode_at_flags, 0x41100, "AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH|0x40000"),
    (flags.decode_access_mode, 0, "F_OK"),
    (flags.decode_access_mode, 7, "R_OK|W_OK|X_OK"),
    (flags.decode_ioctl_request, 0x5401, "TCGETS"),
    (flags.decode_ioctl_request, 0x5413, "TIOCGWINSZ"),
    (flags.decode_ioctl_request, 0x540F, "TIOCGPGRP"),
    (flags.decode_ioctl_request, 0x5410, "TIOCSPGRP"),
    (flags.decode_ioctl_request, 0x541B, "FIONREAD"),
    (flags.decode_ioctl_request, 0x1234, "_IOC(_IOC_NONE, 0x12, 0x34, 0)"),
    (flags.decode_ioctl_request, 0xc0105512, "_IOC(_IOC_READ|_IOC_WRITE, 0x55, 0x12, 0x10)"),
    (flags.decode_futex_op, 0x81, "FUTEX_WAKE_PRIVATE"),
    (flags.decode_futex_op, 0x189, "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME"),
    (flags.decode_file_mode, 0o100644, "S_IFREG|0644"),
    (flags.decode_file_mode, 0o41777, "S_IFDIR|S_ISVTX|0777"),
    (flags.decode_file_mode, 0o20666, "S_IFCHR|0666"),
])
def test_decoders(decode, value, text):
    assert decode(value) == text


@pytest.mark.parametrize("table,prefix,value,text", [
    (flags.FCNTL_COMMANDS, "F_", 1030, "F_DUPFD_CLOEXEC"),
    (flags.FCNTL_COMMANDS, "F_", 0x63, "0x63 /* F_??? */"),
    (flags.CLOCKS, "CLOCK_", 1, "CLOCK_MONOTONIC"),
    (flags.CLOCKS, "CLOCK_", 17, "0x11 /* CLOCK_??? */"),
    (flags.WHENCE, "SEEK_", 1, "SEEK_CUR"),
    (flags.WHENCE, "SEEK_", 7, "0x7 /* SEEK_??? */"),
    (flags.SIGMASK_HOW, "SIG_", 0, "SIG_BLOCK"),
    (flags.SIGMASK_HOW, "SIG_", 2, "SIG_SETMASK"),
    (flags.ARCH_PRCTL_CODES, "ARCH_", 0x1002, "ARCH_SET_FS"),
])
def test_enums(table, prefix, value, text):
    assert flags.decode_enum(value, table, prefix) == text


@pytest.mark.parametrize("value,text", [(0, "000"), (7, "007"), (0o22, "022"),
                                        (0o644, "0644"), (0o4755, "04755")])
def test_octal_like_c(value, text):
    assert flags.format_octal(value) == text


def test_hex_like_c():
    assert (flags.format_hex(0), flags.format_hex(0x26000)) == ("0", "0x26000")
