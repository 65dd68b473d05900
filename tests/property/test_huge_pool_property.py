"""The huge page pool (kernel_model/memory/hugetlb.py): whatever the order of mappings made,
mappings gone and pool resizes, the pages in use are those of the live mappings, a mapping
is refused (ENOMEM) exactly when the free pages are too few, and the pool never shrinks
below the pages in use."""
from hypothesis import example, given, settings, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.memory.hugetlb import HPAGE, HugePool

steps = st.lists(st.one_of(st.tuples(st.just("map"), st.integers(1, 4)),
                           st.tuples(st.just("unmap"), st.integers(0, 10)),
                           st.tuples(st.just("resize"), st.integers(0, 8))), max_size=40)


@settings(max_examples=80, deadline=None)
@given(steps)
@example([("resize", 2), ("map", 2), ("map", 1), ("resize", 0), ("unmap", 0), ("map", 1)])
def test_pages_in_use_are_the_live_mappings(script):
    pool, live, refused = HugePool(), [], 0
    for action, n in script:
        if action == "map":
            fits = n <= pool.total - pool.used
            try:
                pages = pool.take(n * HPAGE, HPAGE)
            except GuestErrno as err:
                assert err.errno == E.ENOMEM and not fits
                refused += 1
            else:
                assert fits
                pages.hold()
                live.append((pages, n))
        elif action == "unmap" and live:
            pages, _ = live.pop(n % len(live))
            pages.drop()
        elif action == "resize":
            pool.set_total(n)
            assert pool.total == max(n, pool.used)
        assert pool.used == sum(count for _, count in live) <= pool.total
    for pages, _ in live:
        pages.drop()
    assert pool.used == 0
    if ("map", 1) in script and script[0] == ("resize", 2):
        assert refused, "the example's full pool was reached but nothing was refused"
