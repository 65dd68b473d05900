"""trapline/experiments/sweep.py: a sweep's points are the product of its axes, a zip group
is one axis whose lists move together, and the first axis varies slowest."""
import math

from hypothesis import given, strategies as st

from trapline.experiments.sweep import axes, drawn, names, points

NAMES = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])
VALUES = st.lists(st.integers(0, 9) | st.sampled_from(["x", "y"]), min_size=1, max_size=4)


@st.composite
def sweeps(draw):
    """Plain lists and zip groups over distinct names, in a drawn order; always one plain list
    and one zip group of two lists of two values or more (the cases the property is about)."""
    used = draw(st.lists(NAMES, min_size=3, max_size=8, unique=True))
    length = draw(st.integers(2, 4))
    sweep = {used[0]: draw(VALUES)}
    groups = [{n: draw(st.lists(st.integers(0, 9), min_size=length, max_size=length))
               for n in used[1:3]}]
    rest = used[3:]
    while rest:
        size = draw(st.integers(1, min(3, len(rest))))
        chunk, rest = rest[:size], rest[size:]
        if size == 1 and draw(st.booleans()):
            sweep[chunk[0]] = draw(VALUES)
        else:
            length = draw(st.integers(1, 4))
            groups.append({n: draw(st.lists(st.integers(0, 9), min_size=length, max_size=length))
                           for n in chunk})
    if groups:
        sweep["zip"] = groups
    return sweep


@given(sweeps())
def test_points_are_the_product_and_zip_groups_stay_aligned(sweep):
    found = points(sweep)
    lengths = [len(v) for k, v in sweep.items() if k != "zip"]
    lengths += [len(next(iter(g.values()))) for g in sweep.get("zip", [])]
    assert len(found) == math.prod(lengths)
    assert all(set(p) == set(names(sweep)) for p in found)
    for group in sweep.get("zip", []):
        rows = list(zip(*group.values()))
        for point in found:                  # every point takes one row of the group whole
            assert tuple(point[n] for n in group) in rows
        assert len(rows) > 1 or group is not sweep["zip"][0]
        if len(rows) > 1:                    # and every row is taken
            assert {tuple(p[n] for n in group) for p in found} == set(rows)


@given(sweeps())
def test_the_first_axis_varies_slowest(sweep):
    first, found = axes(sweep)[0], points(sweep)
    block = len(found) // len(first)
    for i, setting in enumerate(first):
        assert all(p.items() >= setting.items() for p in found[i * block:(i + 1) * block])


def test_a_zip_group_keeps_its_place_in_the_order():
    sweep = {"arch": ["i386", "x86_64"], "zip": [{"guest": ["t", "p"], "sample": ["lt", "lp"]}],
             "q": [1, 7]}
    assert names(sweep) == ["arch", "guest", "sample", "q"]
    assert [tuple(p.values()) for p in points(sweep)][:4] == [
        ("i386", "t", "lt", 1), ("i386", "t", "lt", 7), ("i386", "p", "lp", 1), ("i386", "p", "lp", 7)]


@given(st.integers(0, 2**32), st.integers(1, 20), st.integers(0, 1000), st.integers(0, 50))
def test_random_values_are_distinct_sorted_in_range_and_the_seed_s_alone(seed, count, low, extra):
    high = low + count - 1 + extra
    sweep = {"n": {"random": count, "low": low, "high": high}, "m": [1, 2]}
    values = drawn(sweep, seed)["n"]
    assert values == sorted(set(values)) and len(values) == count
    assert low <= values[0] and values[-1] <= high
    assert drawn({"n": sweep["n"]}, seed)["n"] == values      # the other axes change nothing
    assert drawn(sweep, seed)["n"] == values                  # the same draw every time
    assert len(points(drawn(sweep, seed))) == 2 * count


def test_another_seed_draws_other_values():
    sweep = {"n": {"random": 5, "low": 0, "high": 10**6}}
    assert drawn(sweep, 1)["n"] != drawn(sweep, 2)["n"]
