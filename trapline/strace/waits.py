"""How strace decodes the calls that wait: the sleeps' time left, the timeouts of ppoll and
pselect6, pselect6's signal-mask pair, rt_sigtimedwait's set, and the `(Timeout)` a poll or a
select that waited its whole timeout returns.

The time left is written by the kernel when a signal interrupts a relative sleep (EINTR, or
ERESTART_RESTARTBLOCK before its restart: kernel/time/hrtimer.c do_nanosleep's
nanosleep_copyout), and strace prints it then, after `resumed>`; an address otherwise.
"""
from . import structs, xlat_style
from .siginfo import read_siginfo
from .strings import format_address, read_words

EINTR, ERESTART_RESTARTBLOCK = 4, 516
TIMED_OUT = frozenset({"poll", "ppoll", "ppoll_time64", "select", "_newselect", "pselect6",
                       "pselect6_time64"})


def _time_left(word: int):
    def decode(call, index, value):
        if call.ret in (-EINTR, -ERESTART_RESTARTBLOCK) and value:
            return structs.format_timespec(call.mem, value, word or call.word)
        return format_address(value)
    return decode


def _timeout(word: int):
    return lambda call, index, value: structs.format_timespec(call.mem, value, word or call.word)


def _sigmask_pair(call, index, value) -> str:
    """pselect6's sixth argument: {const sigset_t *ss; size_t ss_len} (fs/select.c)."""
    if not value:
        return "NULL"
    words = read_words(call.mem, value, call.word, 2)
    if words is None:
        return format_address(value)
    mask, size = words
    return f"{{sigmask={structs.format_sigset(call.mem, mask, size)}, sigsetsize={size}}}"


def _waited_set(call, index, value) -> str:
    return structs.format_sigset(call.mem, value, call.arg(3))


def _taken_siginfo(call, index, value) -> str:
    """rt_sigtimedwait's info: the signal taken, unless the call failed or it is NULL."""
    shown = None if call.failed or not value else read_siginfo(call.mem, value, call.word)
    return format_address(value) if shown is None else shown


def _taken_signal(call) -> str:
    """rt_sigtimedwait returns the signal it took: strace names it (`= 17 (SIGCHLD)`)."""
    return f" ({xlat_style.signal(call.ret)})" if call.ret > 0 else ""


OVERRIDES = {
    ("nanosleep", 1): _time_left(0), ("clock_nanosleep", 3): _time_left(0),
    ("clock_nanosleep_time64", 3): _time_left(8),
    ("ppoll", 2): _timeout(0), ("ppoll_time64", 2): _timeout(8),
    ("pselect6", 4): _timeout(0), ("pselect6_time64", 4): _timeout(8),
    ("pselect6", 5): _sigmask_pair, ("pselect6_time64", 5): _sigmask_pair,
    ("rt_sigtimedwait", 0): _waited_set, ("rt_sigtimedwait_time64", 0): _waited_set,
    ("rt_sigtimedwait", 1): _taken_siginfo, ("rt_sigtimedwait_time64", 1): _taken_siginfo,
}
# (a sleep's time left is printed after `resumed>`, as the kernel fills it in)
OUTPUTS = frozenset({("nanosleep", 1), ("clock_nanosleep", 3), ("clock_nanosleep_time64", 3),
                     ("rt_sigtimedwait", 1), ("rt_sigtimedwait_time64", 1)})


def _timed_out(call) -> str:
    return " (Timeout)" if call.ret == 0 else ""


RETURN_NOTES = {**dict.fromkeys(TIMED_OUT, _timed_out),
                "rt_sigtimedwait": _taken_signal, "rt_sigtimedwait_time64": _taken_signal}
