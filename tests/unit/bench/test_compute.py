"""bench/compute.py's harness (issue 31): the sample's hash_buffer called alone gives SHA-256 of
its bytes on a bare Uc, under the page walker and on trapline's Machine, on both arches, and the
pages are mapped with the union of their segments' permissions. The timings are the bench's."""
import pytest

from bench.compute import Call, _with_page_walker, expected_digest, page_runs
from emu.machine import Machine


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("where", ["bare", "walker", "machine"])
def test_the_function_alone_hashes_its_bytes(arch, where):
    call = Call(arch, 1000, machine=Machine(arch) if where == "machine" else None)
    kept = _with_page_walker(call) if where == "walker" else None       # noqa: F841
    assert call.run() == expected_digest(1000)
    assert call.run() == expected_digest(1000)         # again, from the saved start


def test_a_page_shared_by_two_segments_gets_both_permissions():
    from types import SimpleNamespace
    image = SimpleNamespace(segments=[SimpleNamespace(vaddr=0x1000, memsz=0x1800, perms=5),
                                      SimpleNamespace(vaddr=0x2900, memsz=0x2000, perms=3)])
    assert page_runs(image) == [(0x1000, 0x1000, 5), (0x2000, 0x1000, 7), (0x3000, 0x2000, 3)]
