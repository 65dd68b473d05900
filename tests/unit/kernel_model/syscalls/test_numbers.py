"""The syscall number tables agree with Linux's syscall_32.tbl / syscall_64.tbl."""
import pytest

from kernel_model.syscalls import numbers_i386, numbers_x86_64

I386 = {"exit": 1, "fork": 2, "read": 3, "write": 4, "open": 5, "close": 6, "waitpid": 7,
        "execve": 11, "brk": 45, "ioctl": 54, "mmap": 90, "munmap": 91, "clone": 120,
        "uname": 122, "mprotect": 125, "_llseek": 140, "getdents": 141, "writev": 146,
        "rt_sigaction": 174, "rt_sigprocmask": 175, "mmap2": 192, "stat64": 195,
        "fstat64": 197, "getdents64": 220, "fcntl64": 221, "gettid": 224, "futex": 240,
        "set_thread_area": 243, "exit_group": 252, "set_tid_address": 258,
        "clock_gettime": 265, "openat": 295, "set_robust_list": 311, "pipe2": 331,
        "prlimit64": 340, "getrandom": 355, "statx": 383, "rseq": 386, "clone3": 435}
X86_64 = {"read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6,
          "poll": 7, "lseek": 8, "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12,
          "rt_sigaction": 13, "rt_sigprocmask": 14, "ioctl": 16, "pread64": 17, "writev": 20,
          "access": 21, "pipe": 22, "madvise": 28, "dup2": 33, "getpid": 39, "clone": 56,
          "fork": 57, "vfork": 58, "execve": 59, "exit": 60, "wait4": 61, "kill": 62,
          "uname": 63, "fcntl": 72, "getcwd": 79, "chdir": 80, "rename": 82, "mkdir": 83,
          "unlink": 87, "readlink": 89, "umask": 95, "getrlimit": 97, "sysinfo": 99,
          "getuid": 102, "arch_prctl": 158, "gettid": 186, "time": 201, "futex": 202,
          "getdents64": 217, "set_tid_address": 218, "clock_gettime": 228, "exit_group": 231,
          "tgkill": 234, "openat": 257, "newfstatat": 262, "pipe2": 293, "prlimit64": 302,
          "getrandom": 318, "statx": 332, "rseq": 334, "clone3": 435}


@pytest.mark.parametrize("name,number", sorted(I386.items()))
def test_i386_number(name, number):
    assert numbers_i386.NUMBERS[number] == name
    assert numbers_i386.BY_NAME[name] == number


@pytest.mark.parametrize("name,number", sorted(X86_64.items()))
def test_x86_64_number(name, number):
    assert numbers_x86_64.NUMBERS[number] == name
    assert numbers_x86_64.BY_NAME[name] == number


@pytest.mark.parametrize("table", [numbers_i386, numbers_x86_64])
def test_tables_are_one_to_one(table):
    assert len(table.BY_NAME) == len(table.NUMBERS)
    assert all(table.NUMBERS[number] == name for name, number in table.BY_NAME.items())


@pytest.mark.parametrize("number", [222, 223, 251, 285, 387, 392, 415, 453])
def test_i386_unassigned_numbers_are_absent(number):
    assert number not in numbers_i386.NUMBERS


def test_x86_64_has_no_x32_entries_and_no_gap_numbers():
    assert max(numbers_x86_64.NUMBERS) < 512
    assert not set(range(336, 424)) & set(numbers_x86_64.NUMBERS)


def test_tables_share_the_common_numbering_from_424():
    shared = {n for n in numbers_i386.NUMBERS if n >= 424} | {
        n for n in numbers_x86_64.NUMBERS if n >= 424}
    for number in shared - {453}:
        assert numbers_i386.NUMBERS[number] == numbers_x86_64.NUMBERS[number]
    assert numbers_x86_64.NUMBERS[453] == "map_shadow_stack"
