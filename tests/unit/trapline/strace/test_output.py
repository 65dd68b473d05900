"""Where strace's lines go and their leaders (trapline/strace/output.py), and -c's table
(summary.py): strace 6.x's formats."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trapline.strace.options import StraceOptions
from trapline.strace.output import ALIGN_COLUMN, StraceOutput, aligned
from trapline.strace.summary import Summary


def test_pid_prefixes_as_strace_prints_them(tmp_path):
    stderr = StraceOutput(None, StraceOptions(follow_forks=1))
    assert stderr.pid_prefix(101, several=True) == "[pid   101] "
    assert stderr.pid_prefix(101, several=False) == ""
    to_file = StraceOutput(None, StraceOptions(follow_forks=1, output=str(tmp_path / "t")))
    assert to_file.pid_prefix(101, several=False) == "101   "
    to_file.close()
    separate = StraceOutput(None, StraceOptions(follow_forks=2, output=str(tmp_path / "p")))
    assert separate.pid_prefix(101, several=True) == ""
    separate.write(101, "", "a")
    separate.write(102, "", "b")
    separate.close()
    assert (tmp_path / "p.101").read_text() == "a\n" and (tmp_path / "p.102").read_text() == "b\n"
    assert StraceOutput(None, StraceOptions()).pid_prefix(101, several=True) == ""


@given(st.text(alphabet="abc(), ", max_size=60), st.integers(min_value=0, max_value=20))
def test_the_result_starts_at_column_40_or_one_space_after_the_call(head, used):
    line = aligned(head, "0", used)
    assert line.startswith(head + " ")
    start = used + line.rindex("= ")
    if used + len(head) + 1 < ALIGN_COLUMN:
        assert start == ALIGN_COLUMN
    else:
        assert line == head + " = 0"


def test_virtual_clock_time_stamps():
    ns = 1_500_000      # 1.5 ms after the run's start
    assert StraceOutput(None, StraceOptions(timestamps=1)).time_prefix(ns) == "22:13:20 "
    assert StraceOutput(None, StraceOptions(timestamps=2)).time_prefix(ns) == "22:13:20.001500 "
    assert StraceOutput(None, StraceOptions(timestamps=3)).time_prefix(ns) == "1700000000.001500 "
    relative = StraceOutput(None, StraceOptions(relative=True))
    assert relative.time_prefix(ns) == "     0.000000 "
    assert relative.time_prefix(ns + 2_000) == "     0.000002 "
    assert StraceOutput(None, StraceOptions()).time_prefix(ns) == ""


def test_summary_table():
    summary = Summary()
    summary.add("read", False, 3000)
    summary.add("read", True, 1000)
    summary.add("write", False, 0)
    assert summary.table().splitlines() == [
        "% time     seconds  usecs/call     calls    errors syscall",
        "------ ----------- ----------- --------- --------- ----------------",
        "100.00    0.000004           2         2         1 read",
        "  0.00    0.000000           0         1           write",
        "------ ----------- ----------- --------- --------- ----------------",
        "100.00    0.000004           1         3         1 total",
    ]


def test_summary_tables_per_abi_in_number_order_and_name_width():
    """strace -c on an i386 program: the first execve in the 64-bit table, the program's calls
    under "System call usage summary for 32 bit mode:", ties in i386 number order (writev 146
    before set_thread_area 243), the name column one wider than sched_getaffinity."""
    summary = Summary()
    summary.add("execve", False, 0, "x86_64")
    for name in ("sched_getaffinity", "set_thread_area", "writev", "ioctl"):
        summary.add(name, name == "ioctl", 0, "i386")
    lines = summary.table().splitlines()
    assert [line.split()[-1] for line in lines[:5]] == ["syscall", "-" * 16, "execve", "-" * 16,
                                                       "total"]
    assert lines[5] == "System call usage summary for 32 bit mode:"
    names = [line.split()[-1] for line in lines[8:12]]
    assert names == ["ioctl", "writev", "sched_getaffinity", "set_thread_area"]
    assert lines[7] == "------ ----------- ----------- --------- --------- " + "-" * 18
    assert lines[1] == "------ ----------- ----------- --------- --------- " + "-" * 16


@pytest.mark.parametrize(("sort_by", "order"), [
    ("calls", ["write", "read", "close"]), ("name", ["close", "read", "write"]),
    ("errors", ["close", "read", "write"]), ("nothing", ["read", "write", "close"]),
    ("time", ["read", "write", "close"])])
def test_summary_sort_keys(sort_by, order):
    """-S: each key, ties in x86-64 number order (read 0, write 1, close 3)."""
    summary = Summary(sort_by)
    for name, failed, ns in (("read", False, 5000), ("write", False, 0), ("write", False, 0),
                             ("close", True, 0)):
        summary.add(name, failed, ns)
    assert [line.split()[-1] for line in summary.table().splitlines()[2:5]] == order
