""""Attaching N probes..." counts as bpftrace does: a wildcard is as many probes as
`trace -l` lists for it (one per system call, one per function symbol of a host binary),
BEGIN and END one each."""
from pathlib import Path

from trapline.lang.listing import listing
from trapline.lang.runner import count_probes
from tests.unit.trapline.lang.fake_hit import consumer

FIB = str(Path(__file__).resolve().parents[4] / "samples" / "bin" / "x86_64" / "fib")


def _count(program: str) -> int:
    made, _, _ = consumer(program)
    return count_probes([made])


def test_wildcards_count_what_trace_l_lists():
    syscalls = len(listing("tracepoint:syscalls:sys_enter_read*", [], {}))
    functions = len(listing(f"uprobe:{FIB}:f*", [], {}))
    assert syscalls >= 4 and functions == 2                   # fib and frexpl
    program = (f"tracepoint:syscalls:sys_enter_read* {{ @ = count(); }} "
               f"uprobe:{FIB}:f*, uprobe:{FIB}:main {{ @f = count(); }} BEGIN {{ }} END {{ }}")
    assert _count(program) == syscalls + functions + 1 + 2


def test_a_library_named_by_its_soname_counts_once():
    """Its file is found when the run maps it, after the line is printed."""
    assert _count("uprobe:libc.so.6:str* { @ = count(); } uretprobe:libc.so.6:malloc { @m = count(); }") == 2


def test_a_wildcard_matching_nothing_is_still_one_attach_point():
    assert _count(f"uprobe:{FIB}:nothing_like_this* {{ @ = count(); }}") == 1
