"""segment_areas works on the segments' edges (a 2 GiB .bss is half a million pages): it must
give the areas the page-by-page definition gives, for any set of PT_LOADs."""
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from kernel_model.process.exec import _perms, segment_areas
from kernel_model.memory.layout import PAGE
from loader.image import PERM_R, PERM_W, PERM_X

segments = st.lists(st.builds(lambda vaddr, memsz, perms: SimpleNamespace(vaddr=vaddr, memsz=memsz, perms=perms),
                              st.integers(0x10000, 0x40000), st.integers(1, 0x9000),
                              st.sampled_from([PERM_R, PERM_R | PERM_X, PERM_R | PERM_W, PERM_W, 0])),
                    min_size=1, max_size=5)


def page_by_page(image):
    page_perms = {}
    for seg in image.segments:
        for page in range(seg.vaddr & ~(PAGE - 1), (seg.vaddr + seg.memsz + PAGE - 1) & ~(PAGE - 1), PAGE):
            page_perms[page] = page_perms.get(page, 0) | _perms(seg.perms)
    areas = []
    for page in sorted(page_perms):
        if areas and areas[-1][1] == page and areas[-1][2] == page_perms[page]:
            areas[-1][1] = page + PAGE
        else:
            areas.append([page, page + PAGE, page_perms[page]])
    return [tuple(a) for a in areas]


@given(segments)
def test_areas_match_the_page_by_page_definition(segs):
    image = SimpleNamespace(segments=segs)
    assert segment_areas(image) == page_by_page(image)
