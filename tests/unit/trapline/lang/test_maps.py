"""Aggregations and maps printed as bpftrace's text output prints them (src/output.cpp)."""
from trapline.lang.aggregations import Avg, Count, Hist, Lhist, Max, Min, Stats, Sum
from trapline.lang.maps import Map, Maps


def _filled(kind, values, *args):
    aggregation = kind(*args)
    for value in values:
        aggregation.add(value)
    return aggregation


def test_hist_lines_are_bpftraces():
    hist = _filled(Hist, [0] * 12 + [1] * 25 + [2, 3, 3, 2] + [5] * 31 + [1500] * 2)
    assert hist.text().splitlines() == [
        "[0]                   12 |" + "@" * 20 + " " * 32 + "|",
        "[1]                   25 |" + "@" * 41 + " " * 11 + "|",
        "[2, 4)                 4 |" + "@" * 6 + " " * 46 + "|",
        "[4, 8)                31 |" + "@" * 52 + "|",
        "[8, 16)                0 |" + " " * 52 + "|",
        "[16, 32)               0 |" + " " * 52 + "|",
        "[32, 64)               0 |" + " " * 52 + "|",
        "[64, 128)              0 |" + " " * 52 + "|",
        "[128, 256)             0 |" + " " * 52 + "|",
        "[256, 512)             0 |" + " " * 52 + "|",
        "[512, 1K)              0 |" + " " * 52 + "|",
        "[1K, 2K)               2 |" + "@" * 3 + " " * 49 + "|",
    ]


def test_hist_of_negatives_and_large_values():
    hist = _filled(Hist, [-5, 1 << 20, (1 << 41) + 3])
    labels = [label for label, _ in hist.rows()]
    assert labels[0] == "(..., 0)" and labels[-1] == "[2T, 4T)" and "[1M, 2M)" in labels


def test_lhist_lines_are_bpftraces():
    lhist = _filled(Lhist, [-1, 0, 5, 10, 199, 200, 5000], 0, 2048, 1024)
    assert [label for label, _ in lhist.rows()] == ["(..., 0)", "[0, 1K)", "[1K, 2K)", "[2K, ...)"]
    assert [count for _, count in lhist.rows()] == [1, 5, 0, 1]


def test_values_and_stats():
    assert _filled(Count, [None] * 3).text() == "3"
    assert _filled(Sum, [1, 2, -7]).text() == "-4"
    assert _filled(Min, [4, -2, 9]).text() == "-2" and _filled(Max, [4, -2, 9]).text() == "9"
    assert _filled(Avg, [-7, 0]).text() == "-3"            # C truncates toward zero
    assert _filled(Stats, [1, 2, 4]).text() == "count 3, average 2, total 7"


def test_a_map_prints_sorted_by_value_then_key():
    shown = Map("@")
    for key, count in (("bash", 3), ("ls", 1), ("awk", 3), ("sh", 10)):
        shown.values[(key,)] = _filled(Count, [None] * count)
    assert shown.text() == "@[ls]: 1\n@[awk]: 3\n@[bash]: 3\n@[sh]: 10"


def test_maps_at_exit():
    maps = Maps()
    maps.get("@z").values[()] = 5
    maps.get("@a").values[(1, "x")] = _filled(Count, [None])
    maps.get("@empty")
    maps.get("@h").values[()] = _filled(Hist, [1])
    assert maps.text_at_exit() == (
        "\n\n@a[1, x]: 1\n"
        "\n"                                            # @empty
        "@h:\n[1]                    1 |" + "@" * 52 + "|\n\n"
        "@z: 5\n")


def test_print_with_top_and_divisor():
    shown = Map("@bytes")
    for key, total in (("a", 1000), ("b", 3000), ("c", 2000)):
        shown.values[(key,)] = _filled(Sum, [total])
    assert shown.text(top=2, divisor=1000) == "@bytes[c]: 2\n@bytes[b]: 3"
