"""profile_point.py's distances between a sampled and the exact per-function profile."""
from collections import Counter

from hypothesis import given, strategies as st

from trapline.experiments.profile_point import max_share_error, total_variation

counts = st.dictionaries(st.sampled_from([("m", f"f{i}") for i in range(6)]),
                         st.integers(min_value=1, max_value=10_000), min_size=1).map(Counter)


@given(counts, counts)
def test_the_distance_is_a_share_between_0_and_1_and_symmetric(p, q):
    distance = total_variation(p, q)
    assert 0 <= distance <= 1 + 1e-12
    assert abs(distance - total_variation(q, p)) < 1e-12
    assert max_share_error(p, q) <= distance + 1e-12     # one function moves at most all of it


@given(counts, st.integers(min_value=1, max_value=50))
def test_the_same_shares_are_at_distance_0(p, scale):
    assert total_variation(p, Counter({k: n * scale for k, n in p.items()})) < 1e-12


@given(counts)
def test_disjoint_profiles_are_at_distance_1(p):
    moved = Counter({(m, f + "'"): n for (m, f), n in p.items()})
    assert abs(total_variation(p, moved) - 1) < 1e-12
    assert max_share_error(p, moved) == max(n for n in p.values()) / sum(p.values())
