"""User namespaces' id maps (kernel_model/user_namespace.py): whatever extents are written to
a namespace and to one below it, an id of the inner namespace is mapped exactly when each
level's extents cover it on its way down, make_kid and from_kid are inverse on the mapped
ids, and an unmapped kernel id shows as the overflow id; a map is written once."""
from hypothesis import example, given, settings, strategies as st

from kernel_model import errno as E
from kernel_model.creds import ROOT
from kernel_model.errno import GuestErrno
from kernel_model.user_namespace import (INITIAL, OVERFLOW_ID, UserNamespace, from_kid,
                                         make_kid, munged, write_map)

extent = st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(1, 8))


def _disjoint(extents):
    kept = []
    for first, lower, count in extents:
        if all(first + count <= f or f + c <= first for f, _, c in kept) and \
                all(lower + count <= lw or lw + c <= lower for _, lw, c in kept):
            kept.append((first, lower, count))
    return kept


def _text(extents) -> bytes:
    return b"".join(b"%d %d %d\n" % e for e in extents)


def _down(extents, ident):
    for first, lower, count in extents:
        if first <= ident < first + count:
            return lower + ident - first
    return None


@settings(max_examples=100, deadline=None)
@given(st.lists(extent, min_size=1, max_size=4), st.lists(extent, min_size=1, max_size=4))
@example([(0, 10, 5)], [(0, 2, 2)])
def test_nested_maps(outer_extents, inner_extents):
    outer_extents, inner_extents = _disjoint(outer_extents), _disjoint(inner_extents)
    outer = UserNamespace(1, INITIAL)
    write_map(ROOT, outer, "uid_map", 0, _text(outer_extents))
    inner = UserNamespace(2, outer)
    # a task of the outer namespace, with every capability there, writes the inner map (the
    # writer is a task of the namespace or its parent): its lower ids must be mapped in the
    # outer namespace, else the write is EPERM and nothing is set
    writer = ROOT.in_new_namespace(outer)
    inner_mapped = all(make_kid(outer, lower) is not None and make_kid(outer, lower + count - 1) is not None
                       for _, lower, count in inner_extents)
    try:
        write_map(writer, inner, "uid_map", 0, _text(inner_extents))
    except GuestErrno as err:
        assert err.errno == E.EPERM and not inner_mapped and inner.uid_map == ()
    else:
        assert inner_mapped and inner.uid_map == tuple(inner_extents)
    mapped_through = 0
    for ident in range(0, 60):
        via_outer = _down(inner.uid_map, ident)
        expected = None if via_outer is None else _down(outer_extents, via_outer)
        assert make_kid(inner, ident) == expected
        if expected is not None:
            mapped_through += 1
            assert from_kid(inner, expected) == ident
    for kid in range(0, 60):
        seen = from_kid(inner, kid)
        assert munged(inner, kid) == (OVERFLOW_ID if seen is None else seen)
        assert seen is None or make_kid(inner, seen) == kid
    try:
        write_map(ROOT, outer, "uid_map", 0, b"0 0 1\n")
        raise AssertionError("a second write was taken")
    except GuestErrno as err:
        assert err.errno == E.EPERM
    if (outer_extents, inner_extents) == ([(0, 10, 5)], [(0, 2, 2)]):
        assert mapped_through == 2, "the example's two ids mapped through both levels were not"
