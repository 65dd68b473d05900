"""Invariants of the language's values and aggregations, on random inputs."""
from hypothesis import given, strategies as st

from trapline.lang.aggregations import Hist, Lhist
from trapline.lang.maps import Map
from trapline.lang.aggregations import Count
from trapline.lang.values import wrap64
from tests.unit.trapline.lang.fake_hit import FakeHit, consumer, fire_all

INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)


def _bounds(label: str) -> tuple[float, float]:
    """A bucket label's [low, high) (the open ends as infinities)."""
    def number(text: str) -> float:
        text = text.strip()
        if text == "...":
            return float("inf")
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1], 1)
        return int(text.rstrip("KMGT")) * scale
    if label.startswith("(..., "):
        return float("-inf"), number(label[6:-1])
    low, _, high = label[1:-1].partition(", ")
    if not high:                                   # [0], [1]: one value
        return number(low), number(low) + 1
    high_value = float("inf") if high == "..." else number(high)
    return number(low), high_value


@given(st.lists(st.integers(min_value=-5, max_value=1 << 45), min_size=1, max_size=60))
def test_every_value_falls_in_its_hist_bucket(values):
    hist = Hist()
    for value in values:
        hist.add(value)
    rows = hist.rows()
    assert sum(count for _, count in rows) == len(values)
    for value in values:
        low, high = _bounds(hist.label(hist.bucket_of(value)))
        assert low <= value < high
    # rows are the buckets from the lowest to the highest used, none missing
    assert len(rows) == max(hist.buckets) - min(hist.buckets) + 1


@given(st.lists(st.integers(min_value=-100, max_value=5000), min_size=1, max_size=60),
       st.integers(min_value=-50, max_value=50), st.integers(min_value=1, max_value=40),
       st.integers(min_value=1, max_value=30))
def test_every_value_falls_in_its_lhist_bucket(values, low, steps, step):
    lhist = Lhist(low, low + steps * step, step)
    for value in values:
        lhist.add(value)
    assert sum(count for _, count in lhist.rows()) == len(values)
    for value in values:
        bucket_low, bucket_high = _bounds(lhist.label(lhist.bucket_of(value)))
        assert bucket_low <= value < bucket_high


@given(st.dictionaries(st.tuples(st.one_of(st.integers(), st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=4))),
                       st.integers(min_value=1, max_value=9), max_size=12), st.randoms())
def test_a_map_prints_the_same_whatever_order_its_keys_came_in(counts, random):
    def made(order):
        shown = Map("@")
        for key in order:
            shown.values[key] = Count()
            for _ in range(counts[key]):
                shown.values[key].add()
        return shown.text()
    keys = list(counts)
    shuffled = keys[:]
    random.shuffle(shuffled)
    assert made(keys) == made(shuffled)
    values = [int(line.rsplit(": ", 1)[1]) for line in made(keys).split("\n") if line]
    assert values == sorted(values)


@given(INT64, INT64, st.sampled_from(["+", "-", "*", "/", "%", "&", "|", "^"]))
def test_integer_arithmetic_is_int64s(a, b, op):
    made, out, reports = consumer(f'uprobe:/p:f {{ printf("%d\\n", arg0 {op} arg1); }}')
    fire_all(made, FakeHit(args=(a, b)))
    if op in "/%" and b == 0:
        assert out.getvalue() == "" and "division by zero" in reports[0]
        return
    if op == "/":
        expected = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    elif op == "%":
        expected = a - (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)) * b
    else:
        expected = eval(f"a {op} b")           # noqa: S307 -- one of the eight operators above
    assert int(out.getvalue()) == wrap64(expected)
    assert -(1 << 63) <= int(out.getvalue()) < 1 << 63
