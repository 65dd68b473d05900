"""mmap's checks in Linux's order (mm/mmap.c do_mmap): a zero length is EINVAL before the file's
access mode is looked at (LTP mmap06 expected EINVAL and got EACCES); a shared writable mapping
of a file not open for writing is EACCES; msync wants a page-aligned, mapped range."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

O_WRONLY, O_RDONLY = 1, 0
PROT_READ, PROT_WRITE = 1, 2
MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS = 1, 2, 0x20
MS_SYNC, MS_ASYNC = 4, 1
AT_FDCWD = -100


def mmap_call(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_zero_length_is_einval_before_the_access_mode(arch):
    results, _, _ = run_script(arch, [("openat", AT_FDCWD, "/f", O_WRONLY, 0),
                                      (mmap_call(arch), 0, 0, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0),
                                      (mmap_call(arch), 0, 4096, PROT_READ, MAP_SHARED, 3, 0)])
    assert results == [3, -E.EINVAL, -E.EACCES]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_shared_writable_map_needs_a_writable_file(arch):
    results, _, _ = run_script(arch, [("openat", AT_FDCWD, "/f", O_RDONLY, 0),
                                      (mmap_call(arch), 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0),
                                      (mmap_call(arch), 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, 3, 0)])
    assert results[:2] == [3, -E.EACCES] and not -4096 < results[2] < 0    # an address


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_msync_checks_its_range_and_flags(arch):
    results, _, _ = run_script(arch, [
        (mmap_call(arch), 0, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
        ("msync", "RO", 4096, MS_SYNC), ("msync", "RO", 4096, MS_SYNC | MS_ASYNC),
        ("msync", 0x1000, 4096, MS_SYNC), ("msync", "RO", 4096, 0x80)])
    assert results[1:] == [0, -E.EINVAL, -E.ENOMEM, -E.EINVAL]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_each_shared_map_of_dev_zero_is_memory_of_its_own(arch):
    """Two MAP_SHARED maps of /dev/zero are two separate zero-filled areas (shmem_zero_setup),
    not one page-cache copy of the device: bytes read into the first (from /f) are not in the
    second, whose first bytes go through a pipe into BUF."""
    first, second = 0x0700_0000, 0x0702_0000
    fixed = MAP_SHARED | 0x10
    results, buf, _ = run_script(arch, [
        ("openat", AT_FDCWD, "/dev/zero", 2, 0),
        (mmap_call(arch), first, 4096, PROT_READ | PROT_WRITE, fixed, 3, 0),
        (mmap_call(arch), second, 4096, PROT_READ | PROT_WRITE, fixed, 3, 0),
        ("openat", AT_FDCWD, "/f", O_RDONLY, 0),
        ("read", 4, first, 6),
        ("pipe", "BUF+64"),
        ("write", 6, second, 6),
        ("read", 5, "BUF", 6)])
    assert results == [3, first, second, 4, 6, 0, 6, 6]
    assert buf[:6] == bytes(6)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_bad_fd_is_ebadf_before_the_length(arch):
    """ksys_mmap_pgoff takes the file (fget) before do_mmap checks anything: LTP mmap08 maps
    a closed fd with length 0 and wants EBADF (the sandbox said EINVAL)."""
    results, _, _ = run_script(arch, [(mmap_call(arch), 0, 0, PROT_WRITE, MAP_SHARED, 9, 0),
                                      (mmap_call(arch), 0, 0, PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, 9, 0)])
    assert results == [-E.EBADF, -E.EINVAL]


MAP_SHARED_VALIDATE, MAP_UNKNOWN = 0x03, 1 << 10


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_map_shared_validate_refuses_unknown_flags(arch):
    """MAP_SHARED_VALIDATE (Linux 4.15) answers EOPNOTSUPP to a flag outside LEGACY_MAP_MASK,
    where MAP_SHARED ignores it (LTP mmap20: the mapping succeeded)."""
    results, _, _ = run_script(arch, [
        ("openat", AT_FDCWD, "/f", 2, 0),
        (mmap_call(arch), 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_UNKNOWN, 3, 0),
        (mmap_call(arch), 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_UNKNOWN, 3, 0),
        (mmap_call(arch), 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | 0x2000, 3, 0)])
    assert results[:2] == [3, -E.EOPNOTSUPP]
    assert all(not -4096 < r < 0 for r in results[2:])          # addresses


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_mprotect_cannot_make_a_read_only_files_shared_map_writable(arch):
    """A shared map of a file opened read-only has no VM_MAYWRITE (do_mmap clears it), so
    mprotect(PROT_WRITE) is EACCES (LTP mprotect01 on /dev/zero; it succeeded); a private map
    of the same file may be made writable."""
    shared, private = 0x0700_0000, 0x0702_0000
    fixed = 0x10
    results, _, _ = run_script(arch, [
        ("openat", AT_FDCWD, "/f", O_RDONLY, 0),
        (mmap_call(arch), shared, 4096, PROT_READ, MAP_SHARED | fixed, 3, 0),
        ("mprotect", shared, 4096, PROT_WRITE),
        ("mprotect", shared, 4096, PROT_READ),
        (mmap_call(arch), private, 4096, PROT_READ, MAP_PRIVATE | fixed, 3, 0),
        ("mprotect", private, 4096, PROT_READ | PROT_WRITE),
        ("openat", AT_FDCWD, "/dev/zero", O_RDONLY, 0),
        (mmap_call(arch), shared, 4096, PROT_READ, MAP_SHARED | fixed, 4, 0),
        ("mprotect", shared, 4096, PROT_WRITE)])
    assert results == [3, shared, -E.EACCES, 0, private, 0, 4, shared, -E.EACCES]
