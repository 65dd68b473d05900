"""Maps print as bpftrace v0.23.0 prints them: its own tests' programs and expected outputs
(github.com/bpftrace/bpftrace at v0.23.0: tests/runtime/call, tests/runtime/signed_ints and
tests/runtime/outputs/*.txt, compared as its runtime engine compares them, stripped of
leading and trailing empty lines; tests/output.cpp's TextOutput tests, compared exactly),
and the newlines around maps as src/output.cpp and src/run_bpftrace.cpp write them.
"""
import pytest

from tests.unit.trapline.lang.fake_hit import FakeHit, consumer

BAR = "@" * 52


def _begin(program: str) -> str:
    """Run a `BEGIN { ...; exit(); }` program: its output, maps at exit included."""
    made, out, reports = consumer(program)
    made.fire(made.blocks[0], FakeHit(probe="BEGIN"))
    made.finish(FakeHit(probe="END"))
    assert not reports
    return out.getvalue()


def _row(label: str, count: int, top: int) -> str:
    return f"{label:<16}{count:>8} |{'@' * int(count / top * 52):<52}|\n"


# tests/runtime/outputs/hist.txt, hist_2_values.txt, lhist.txt (v0.23.0)
HIST = ("@:\n" + _row("(..., 0)", 1, 2) + _row("[0]", 0, 2) + _row("[1]", 0, 2) + _row("[2, 4)", 2, 2)
        + _row("[4, 8)", 1, 2) + _row("[8, 16)", 0, 2) + _row("[16, 32)", 1, 2))
HIST_2_VALUES = ("@:\n" + _row("[2, 4)", 1, 1) + _row("[4, 8)", 0, 1) + _row("[8, 16)", 0, 1)
                 + _row("[16, 32)", 1, 1))
LHIST = ("@:\n" + _row("(..., 0)", 1, 2) + _row("[0, 2)", 0, 2) + _row("[2, 4)", 2, 2) + _row("[4, 6)", 0, 2)
         + _row("[6, 8)", 1, 2) + _row("[8, 10)", 0, 2) + _row("[10, ...)", 1, 2))


@pytest.mark.parametrize("program, expected", [
    # tests/runtime/call: min, max, stats, hist, hist_2_values, lhist
    ("BEGIN { @min = min(2); @min = min(1); @min = min(3); exit();}", "@min: 1"),
    ("BEGIN { @max = max(1); @max = max(3); @max = max(2); exit();}", "@max: 3"),
    ("BEGIN { @stats = stats(1); @stats = stats(2); @stats = stats(3); exit();}",
     "@stats: count 3, average 2, total 6"),
    ("BEGIN { @=hist(-1); @=hist(2); @=hist(3); @=hist(7); @=hist(20); exit();}", HIST),
    ("BEGIN { @=hist(3);@=hist(20);exit();}", HIST_2_VALUES),
    ("BEGIN { @=lhist(2,0,10,2); @=lhist(3,0,10,2); @=lhist(7,0,10,2); @=lhist(-1,0,10,2); "
     "@=lhist(11,0,10,2); exit()}", LHIST),
    # tests/runtime/signed_ints: stats with negative values
    ("BEGIN { @=stats(-10); @=stats(-5); @=stats(5); exit() }", "@: count 3, average -3, total -10"),
    # tests/runtime/call: print_avg_map_args, print_avg_map_with_large_top (outputs/*.txt)
    ('BEGIN { @["a"] = avg(10); @["b"] = avg(20); @["c"] = avg(30); @["d"] = avg(40); print(@, 2, 10); '
     'clear(@); exit(); }', "@[c]: 3\n@[d]: 4"),
    ('BEGIN { @["a"] = avg(10); @["b"] = avg(20); @["c"] = avg(30); @["d"] = avg(40); print(@, 10, 10); '
     'clear(@); exit(); }', "@[a]: 1\n@[b]: 2\n@[c]: 3\n@[d]: 4"),
])
def test_bpftrace_runtime_tests_expected_outputs(program, expected):
    assert _begin(program).strip() == expected.strip()


def test_lhist_labels_without_a_suffix_unless_the_step_is_a_multiple_of_1024():
    """tests/output.cpp TextOutput.lhist_no_suffix: 640000 is 625K, yet no bound is shortened
    with a step of 10000."""
    values = "; ".join(f"@mymap = lhist({v}, 610000, 670000, 10000)" for v in range(610000, 670000, 10000))
    rows = "".join(_row(f"[{v}, {v + 10000})", 1, 1) for v in range(610000, 670000, 10000))
    assert _begin(f"BEGIN {{ {values}; exit(); }}") == "\n\n@mymap:\n" + rows + "\n"


def test_lhist_labels_with_a_suffix_when_the_step_is_a_multiple_of_1024():
    """tests/output.cpp TextOutput.lhist_suffix."""
    values = "; ".join(f"@mymap = lhist({v}, 0, 5120, 1024)" for v in range(0, 5120, 1024))
    labels = ["[0, 1K)", "[1K, 2K)", "[2K, 3K)", "[3K, 4K)", "[4K, 5K)"]
    assert _begin(f"BEGIN {{ {values}; exit(); }}") == "\n\n@mymap:\n" + "".join(_row(x, 1, 1) for x in labels) + "\n"


def test_hist_labels_past_a_tebibyte_take_bpftraces_suffixes():
    """src/output.cpp hist_index_label: the power of 1024 as K M G T P E."""
    text = _begin("BEGIN { @ = hist(1 << 52); @ = hist(1 << 62); exit(); }")
    assert _row("[4P, 8P)", 1, 1) in text and _row("[4E, 8E)", 1, 1) in text


def test_newlines_around_maps_at_exit():
    """src/run_bpftrace.cpp: two newlines, then each map in name order: a value map's lines
    and a newline (TextOutput::map), an avg or stats map's lines and two (map_stats), a
    histogram map's keys apart by an empty line and a newline after the last bars
    (map_hist, map_elem_delim); a map of the program with nothing in it: an empty line."""
    program = ("BEGIN { @a[1] = count(); @a[2] = count(); @b = avg(4); @c[1] = hist(1); @c[2] = hist(2); "
               "@d = sum(3); @e = stats(1); if (0) { @f = count(); } exit(); }")
    assert _begin(program) == (
        "\n\n"
        "@a[1]: 1\n@a[2]: 1\n"
        "@b: 4\n\n"
        "@c[1]:\n" + _row("[1]", 1, 1) + "\n@c[2]:\n" + _row("[2, 4)", 1, 1) + "\n"
        "@d: 3\n"
        "@e: count 1, average 1, total 1\n\n"
        "\n")


def test_stats_and_avg_maps_sort_by_their_average():
    """src/bpftrace.cpp print_map: avg and stats maps sorted by avg_value, not by count."""
    program = ("BEGIN { @s[1] = stats(100); @s[2] = stats(1); @s[2] = stats(1); @s[2] = stats(1); "
               "exit(); }")
    assert _begin(program).strip() == ("@s[2]: count 3, average 1, total 3\n"
                                       "@s[1]: count 1, average 100, total 100")
