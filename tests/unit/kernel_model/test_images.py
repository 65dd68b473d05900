"""kernel_model/images.py: which object holds an address, and where a library's object begins."""
from kernel_model.images import ImageMap, MappedImage, _object_base, _object_end
from kernel_model.memory.vm import Vma

LIBC = b"/usr/lib/x86_64-linux-gnu/libc.so.6"


def test_image_map_finds_the_object_holding_an_address():
    images = ImageMap()
    images.add(MappedImage(b"/bin/ls", 0x555555554000, 0x55555557a000))
    images.add(MappedImage(LIBC, 0x7ffff7ddd000, 0x7ffff7fbf000))
    assert images.at(0x555555554000).path == b"/bin/ls"
    assert images.at(0x7ffff7e00000).name == "libc.so.6"
    assert images.at(0x55555557a000) is None and images.at(0x1000) is None
    child = images.copy()
    images.forget(0x7ffff7ddd000, 0x7ffff7dde000)          # dlclose's munmap of its first page
    assert images.at(0x7ffff7e00000) is None
    assert child.at(0x7ffff7e00000).path == LIBC            # a fork child keeps its own map


def test_library_base_is_its_offset_zero_mapping():
    """ld.so maps the whole span from offset 0, then each segment over it (MAP_FIXED)."""
    vmas = [Vma(0x7ffff7ddd000, 0x7ffff7e03000, 1, LIBC, 0),
            Vma(0x7ffff7e03000, 0x7ffff7f59000, 5, LIBC, 0x26000),
            Vma(0x7ffff7f59000, 0x7ffff7fbf000, 1, LIBC, 0x17c000)]
    assert _object_base(vmas, LIBC, 0x7ffff7e03000, 0x26000) == 0x7ffff7ddd000
    assert _object_end(vmas, LIBC, 0x7ffff7ddd000) == 0x7ffff7fbf000


def test_library_without_an_offset_zero_mapping_is_placed_by_its_offset():
    vmas = [Vma(0x7ffff7e03000, 0x7ffff7f59000, 5, LIBC, 0x26000)]
    assert _object_base(vmas, LIBC, 0x7ffff7e03000, 0x26000) == 0x7ffff7ddd000


def test_the_version_changes_with_every_object_added_or_forgotten():
    images = ImageMap()
    versions = [images.version]
    images.add(MappedImage(b"/lib/a.so", 0x10000, 0x20000))
    versions.append(images.version)
    assert images.forget(0x50000, 0x60000) == [] and images.version == versions[-1]   # nothing gone
    images.forget(0x10000, 0x11000)
    versions.append(images.version)
    assert len(set(versions)) == 3
