"""Why an LTP test did not pass under trapline: one cause per run, for the grouped report.

LTP's exit status is a bit set of what was reported (include/tst_res_flags.h: TFAIL 1, TBROK 2,
TWARN 4, TCONF 32); the new API prints a summary ("failed N", "broken N"...). A run can also end
in ways the test library never sees: a time limit, a signal (trapline exits 128+N), a Python
traceback (a bug of the sandbox, never acceptable), or a call the sandbox does not implement,
which `trapline run -v` names ("unimplemented syscall NAME"). And a run can exit 0 with
no result at all ("no results": see verdict).
"""
import re

TFAIL, TBROK, TWARN, TCONF = 1, 2, 4, 32
UNIMPLEMENTED = re.compile(rb"unimplemented syscall (\w+)")
SIGNAL_NAMES = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV",
                13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 31: "SIGSYS"}


EMPTY_SUMMARY = re.compile(rb"\nSummary:\npassed\s+0\nfailed\s+0\nbroken\s+0\nskipped\s+0\n")


def verdict(returncode: int | None, output: bytes) -> str:
    """"pass", or the cause of a failed run. Exit status 0 alone is not a pass: a summary of
    all zeros means the test's results never reached the library's parent (they live in a
    MAP_SHARED page: without shared memory every result of the child was lost, TBROK
    included, and the parent exited 0)."""
    if returncode == 0:
        return "no results" if EMPTY_SUMMARY.search(output) else "pass"
    return cause(returncode, output)


def cause(returncode: int | None, output: bytes) -> str:
    """The cause of a failed run, as a group name: "timeout", "traceback", "signal SIGSEGV",
    "ENOSYS name", "TBROK", "TFAIL", "TCONF", "TWARN" or "exit N"."""
    if returncode is None:
        return "timeout"
    if b"Traceback (most recent call last)" in output:
        return "traceback"
    if 128 < returncode < 128 + 65:
        return "signal " + SIGNAL_NAMES.get(returncode - 128, str(returncode - 128))
    missing = UNIMPLEMENTED.search(output)
    if missing:
        return "ENOSYS " + missing.group(1).decode()
    for bit, name in ((TBROK, "TBROK"), (TFAIL, "TFAIL"), (TCONF, "TCONF"), (TWARN, "TWARN")):
        if returncode & bit:
            return name
    return f"exit {returncode}"
