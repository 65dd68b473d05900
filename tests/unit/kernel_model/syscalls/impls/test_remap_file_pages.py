"""remap_file_pages (ENOSYS before; LTP remap_file_pages01/02): Linux's emulation maps the
file's page `pgoff` at the address again (MAP_SHARED | MAP_FIXED), after its checks: prot 0,
a range that does not wrap, starting in a shared file mapping (EINVAL)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

AT, PRIVATE = 0x0710_0000, 0x0720_0000
O_RDWR, PROT_RW, MAP_SHARED_FIXED, MAP_PRIVATE_FIXED = 2, 3, 0x11, 0x12


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_page_of_the_file_is_mapped_at_the_address(arch):
    results, buf, _ = run_script(arch, [
        ("openat", -100, "/f", O_RDWR, 0),
        ("ftruncate", 3, 0x3000),
        ("pwrite64", 3, "BUF", 4, 0x2000),                # "page" at file page 2
        (_mmap(arch), AT, 0x2000, PROT_RW, MAP_SHARED_FIXED, 3, 0),
        (_mmap(arch), PRIVATE, 0x1000, PROT_RW, MAP_PRIVATE_FIXED, 3, 0),
        ("remap_file_pages", AT, 0x1000, 1, 2, 0),          # prot must be 0
        ("remap_file_pages", PRIVATE, 0x1000, 0, 2, 0),     # not a shared mapping
        ("remap_file_pages", AT, 0x3000, 0, 2, 0),          # runs past the mapping
        ("remap_file_pages", 0x0790_0000, 0x1000, 0, 2, 0),  # nothing mapped
        ("remap_file_pages", AT, 0x1000, 0, 2, 0),
        ("pipe", "BUF+512"),
        ("write", 5, AT, 4),
        ("read", 4, "BUF+64", 4),
        ("write", 5, AT + 0x1000, 5),                     # the second page is still page 1
        ("read", 4, "BUF+128", 5)], data=b"page")
    assert results[:5] == [3, 0, 4, AT, PRIVATE]
    assert results[5:10] == [-E.EINVAL] * 4 + [0]
    assert results[11:] == [4, 4, 5, 5]
    assert buf[64:68] == b"page" and buf[128:133] == bytes(5)
