"""strace's -e expressions (trapline/strace/expressions.py): sets of calls, classes, negation,
`?` for names that may not exist, signal and status sets, and strace's complaints."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trapline.strace.expressions import (ALL_SYSCALLS, ExpressionError, apply_expression,
                                         parse_signal_set, parse_status_set, parse_trace_set,
                                         syscall_class)
from trapline.strace.options import StraceOptions


def test_names_and_classes():
    assert parse_trace_set("open,read") == {"open", "read"}
    assert {"openat", "execve", "stat", "statx"} <= parse_trace_set("%file")
    assert "read" not in parse_trace_set("%file")
    assert {"read", "write", "close", "openat", "dup2"} <= parse_trace_set("%desc")
    assert {"mmap", "mprotect", "brk", "munmap"} <= parse_trace_set("%memory")
    assert {"fork", "clone", "execve", "wait4", "exit_group"} <= parse_trace_set("%process")
    assert {"socket", "connect"} <= parse_trace_set("%network")
    assert {"rt_sigaction", "kill"} <= parse_trace_set("%signal")
    assert parse_trace_set("file") == parse_trace_set("%file")      # strace's older spelling


def test_the_ipc_class_is_strace_s_ti_calls():
    """strace 6.1's TI calls (linux/i386/syscallent.h, 64/syscallent.h, 32/
    syscallent-common-32.h): i386's semtimedop_time64 is one, as are ipc(2) and its subcalls."""
    assert parse_trace_set("%ipc") == {"ipc", "msgget", "msgsnd", "msgrcv", "msgctl", "semget",
                                       "semop", "semtimedop", "semtimedop_time64", "semctl",
                                       "shmget", "shmat", "shmdt", "shmctl"}


def test_negation_all_and_none():
    assert parse_trace_set("all") is None                           # every call: no filter
    assert parse_trace_set("!none") is None
    assert parse_trace_set("none") == frozenset()
    assert parse_trace_set("!all") == frozenset()
    without = parse_trace_set("!%memory")
    assert "read" in without and "mmap" not in without


def test_unknown_names():
    with pytest.raises(ExpressionError, match="invalid system call 'nosuch'"):
        parse_trace_set("open,nosuch")
    assert parse_trace_set("open,?nosuch") == {"open"}
    with pytest.raises(ExpressionError, match="invalid system call '%nosuch'"):
        parse_trace_set("%nosuch")


def test_regular_expressions_and_the_pure_class():
    """`/REGEX` matches anywhere in the name (strace's regexec); %pure is strace's PU calls,
    which take no argument and cannot fail (not arch_prctl)."""
    assert parse_trace_set("/^(open|close)$") == {"open", "close"}
    assert {"write", "writev", "pwrite64"} <= parse_trace_set("/write")
    assert "writev" not in parse_trace_set("!/write")
    with pytest.raises(ExpressionError, match=r"regcomp: \^\(open: "):
        parse_trace_set("/^(open")
    assert "getpid" in parse_trace_set("%pure") and "arch_prctl" not in parse_trace_set("%pure")


@given(st.sampled_from(sorted(ALL_SYSCALLS - {"signal"})))
def test_an_anchored_name_is_that_call_alone(name):
    assert parse_trace_set(f"/^{name}$") == {name}


def test_signals_and_statuses():
    assert parse_signal_set("SIGCHLD,USR1,9") == {17, 10, 9}
    assert 17 not in parse_signal_set("!SIGCHLD")
    with pytest.raises(ExpressionError):
        parse_signal_set("SIGNOPE")
    assert parse_status_set("successful") == {"successful"}
    assert "failed" not in parse_status_set("!failed")
    with pytest.raises(ExpressionError):
        parse_status_set("bogus")


def test_apply_expression_qualifiers():
    options = StraceOptions()
    apply_expression(options, "trace=openat")
    apply_expression(options, "signal=none")
    apply_expression(options, "status=failed")
    assert options.traces("openat") and not options.traces("read")
    assert options.signals == frozenset()
    assert options.shows_status(True) and not options.shows_status(False)
    apply_expression(options, "read")                               # bare SET: trace=SET
    assert options.traced == {"read"}
    with pytest.raises(ExpressionError, match="qualifier 'bogus'"):
        apply_expression(options, "bogus=none")
    with pytest.raises(ExpressionError, match="-e inject= is not modeled"):
        apply_expression(options, "inject=write:error=EIO")
    with pytest.raises(ExpressionError, match="invalid descriptor 'x'"):
        apply_expression(options, "write=x")


def test_abbrev_raw_and_quiet():
    """-e abbrev=SET: the others unabbreviated (as -v); -e raw=SET; -e quiet=SET, and strace's
    default without it: attach and personality quiet only when the trace goes to a file."""
    options = StraceOptions()
    apply_expression(options, "abbrev=execve")
    assert not options.unabbreviated("execve") and options.unabbreviated("writev")
    apply_expression(options, "raw=open")
    assert options.raw == {"open"}
    apply_expression(options, "raw=all")
    assert options.raw == ALL_SYSCALLS
    assert not options.quiets("personality")
    assert StraceOptions(output="file").quiets("personality")
    assert not StraceOptions(output="file").quiets("exit")
    apply_expression(options, "quiet=exit")
    assert options.quiets("exit") and not options.quiets("personality")
    apply_expression(options, "quiet=!exit")
    assert options.quiets("personality") and not options.quiets("exit")
    with pytest.raises(ExpressionError, match="invalid quiet 'bogus'"):
        apply_expression(options, "quiet=bogus")


# `signal` is i386's signal(2) and strace's old spelling of %signal: strace reads it as the class.
@given(st.sets(st.sampled_from(sorted(ALL_SYSCALLS - {"signal"})), min_size=1, max_size=8))
def test_a_set_and_its_negation_partition_every_call(names):
    text = ",".join(sorted(names))
    chosen, negated = parse_trace_set(text), parse_trace_set("!" + text)
    assert chosen == names
    assert negated is not None and chosen.isdisjoint(negated)
    assert chosen | negated == ALL_SYSCALLS


def test_classes_are_data_over_both_abis():
    assert syscall_class("file") and syscall_class("nosuch") is None
    assert syscall_class("file") <= ALL_SYSCALLS | {"creat", "statx", "open", "execveat"}
