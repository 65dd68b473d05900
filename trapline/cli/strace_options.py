"""strace's options on the commands that run a program (`run`, `trace`, `profile`, `gdbserver`),
with strace 6.x's spelling (strace(1)): short forms where the command has no option of its own by
that letter, and strace's long forms always (--output-separately, --string-limit, ...).

The options are data (SPECS); `strace_options(f, taken=...)` adds them to a command and hands
it one `strace_options` (trapline.strace.options.StraceOptions, or None without --strace). An
option that only strace reads (-o, -e, -c, ...) turns --strace on, as it would be strace's.
Times (-t, -tt, -ttt, -r, -T, -c) are the sandbox's virtual clock: a fixed epoch, one
microsecond per system call and the time the guest sleeps; never the host's.
"""
import functools

import click

# -S's keys (trapline/strace/summary.py SORT_KEYS, which a plain run must not import at start-up)
SORT_NAMES = ("avg-time", "calls", "count", "error", "errors", "name", "none", "nothing",
              "syscall", "syscall-name", "time", "time-avg", "time-total", "total-time")

VIRTUAL = " On the sandbox's virtual clock (fixed epoch, 1 us per syscall), not the host's."

# (dest, short, long, click keyword arguments, help)
SPECS = (
    ("s_output", "-o", "--output", {"metavar": "FILE", "default": None},
     "With --strace: write the trace to FILE (with -ff: FILE.PID per process)."),
    ("s_expr", "-e", None, {"metavar": "EXPR", "multiple": True},
     "With --strace: trace=SET (names, /REGEX, %file %process %network %signal %memory %desc "
     "%ipc %creds %clock %pure %stat..., !SET, ?NAME), signal=SET, status=SET (successful "
     "failed unfinished unavailable detached), abbrev=SET, raw=SET, quiet=SET."),
    ("s_trace", None, "--trace", {"metavar": "SET", "multiple": True}, "Same as -e trace=SET."),
    ("s_signal", None, "--signal", {"metavar": "SET", "multiple": True}, "Same as -e signal=SET."),
    ("s_status", None, "--status", {"metavar": "SET", "multiple": True}, "Same as -e status=SET."),
    ("s_strlen", "-s", "--string-limit", {"type": click.IntRange(min=0), "default": None,
                                          "metavar": "N"},
     "With --strace: show at most N bytes of each string (32)."),
    ("s_hex", "-x", "--strings-in-hex", {"count": True},
     "With --strace: non-ASCII strings in hex; -xx: every string."),
    ("s_fds", "-y", "--decode-fds", {"count": True},
     "With --strace: each descriptor with its path, 3</etc/passwd> (what /proc/PID/fd/N links "
     "to); -yy: sockets with their protocol and ends (3<TCP:[127.0.0.1:80->127.0.0.1:5555]>, "
     "4<UNIX-STREAM:[7->8]>), devices with their number (1</dev/null<char 1:3>>)."),
    ("s_xlat", "-X", "--const-print-style", {"type": click.Choice(["raw", "abbrev", "verbose"]),
                                             "default": None},
     "With --strace: named constants and flags as numbers (raw), names (abbrev, the default) "
     "or both (verbose)."),
    ("s_stack", "-k", "--stack-trace", {"is_flag": True},
     "With --strace: the stack of each call after its line (the profiler's unwinder: CFI, frame "
     "pointers, signal frames)."),
    ("s_time", "-t", "--absolute-timestamps", {"count": True},
     "With --strace: time of day on each line; -tt with microseconds; -ttt as seconds "
     "since the epoch." + VIRTUAL),
    ("s_relative", "-r", "--relative-timestamps", {"is_flag": True},
     "With --strace: time since the previous line." + VIRTUAL),
    ("s_durations", "-T", "--syscall-times", {"is_flag": True},
     "With --strace: time spent in each call, <s.us> at the end of its line." + VIRTUAL),
    ("s_summary_only", "-c", "--summary-only", {"is_flag": True},
     "Count calls, errors and time per syscall; print the table at the end instead of the "
     "lines." + VIRTUAL),
    ("s_summary", "-C", "--summary", {"is_flag": True}, "Like -c, and print the lines too."),
    ("s_sort", "-S", "--summary-sort-by", {"type": click.Choice(SORT_NAMES),
                                           "default": None, "metavar": "SORTBY"},
     "With -c/-C: sort the table by time (the default), calls, errors, name, avg-time or "
     "nothing (the syscall numbers' order)."),
    ("s_wall", "-w", "--summary-wall-clock", {"is_flag": True},
     "With -c/-C: time from entry to exit (strace's latency): the table is that already, "
     "the virtual clock having no separate system time."),
    ("s_quiet", "-q", None, {"count": True},
     "With --strace: -qq: no '+++ exited with N +++' lines; -q alone changes nothing (the "
     "sandbox prints no attach/detach messages)."),
    ("s_quiet_set", None, "--quiet", {"metavar": "SET", "multiple": True},
     "Same as -e quiet=SET (attach, exit, path-resolution, personality, thread-execve, "
     "superseded)."),
    ("s_numbers", "-n", "--syscall-number", {"is_flag": True},
     "With --strace: the syscall's number before each line, [  59] (its ABI's)."),
    ("s_column", "-a", "--columns", {"type": click.IntRange(min=0), "default": None,
                                     "metavar": "COLUMN"},
     "With --strace: align results at COLUMN (40)."),
    ("s_successful", "-z", "--successful-only", {"is_flag": True},
     "With --strace: only the calls that succeeded (-e status=successful)."),
    ("s_failed", "-Z", "--failed-only", {"is_flag": True},
     "With --strace: only the calls that failed (-e status=failed)."),
    ("s_no_abbrev", None, "--no-abbrev", {"is_flag": True},
     "With --strace: structures (stat, statx, utsname, dirents) and execve's environment in "
     "full; -v does it too (with trapline's own diagnostics)."),
)


# The end of the --help of each command that takes strace's options: strace's options it does
# not take, and why (issue 33: "where a flag has no meaning in the sandbox, --help says why").
NOT_HERE = (
    "strace options without a meaning here: -p/--attach PID (no host process to attach to: "
    "the sandbox runs the program it starts); -D/--daemonize and -I (no separate tracer "
    "process to detach or shield from signals); --seccomp-bpf (a stop costs nothing: no "
    "ptrace round trip to spare); -u/--user (the guest's credentials are the modeled "
    "kernel's, root at start). Not modeled: -P PATH, -e inject=/"
    "fault=, -e verbose=, -e kvm=. The program is looked up in the guest's PATH (-E PATH=...), "
    "not trapline's.")

# -q: attach,personality; -qq: and exit; -qqq: all (strace(1))
_QUIET_COUNT = ("quiet=attach,personality", "quiet=attach,personality,exit", "quiet=all")


def strace_options(f, *, taken: frozenset = frozenset()):
    """Add SPECS to command `f`; `taken` are the spellings the command already uses for its
    own options (trace's -o/--output, -c; profile's -o): those are left out."""
    for dest, short, long, kwargs, text in reversed(SPECS):
        names = [name for name in (short, long) if name and name not in taken]
        if dest == "s_output" and "--output" in taken:
            names.append("--strace-output")
        if dest == "s_expr" and "-e" in taken:          # trace's -e is a probe program
            names.append("--strace-expr")
        f = click.option(*names, dest, help=text, **kwargs)(f)

    @functools.wraps(f)
    def command(*args, **kwargs):
        values = {dest: kwargs.pop(dest) for dest, *_ in SPECS}
        kwargs["strace_options"] = _options(values, kwargs)
        return f(*args, **kwargs)
    return command


def _asked(values: dict) -> bool:
    return any(value not in (None, False, 0, ()) for value in values.values())


def _options(values: dict, kwargs: dict):
    """The StraceOptions asked for, or None when strace is not on; turns kwargs' `strace` on
    when an option only strace reads was given."""
    if _asked(values):
        kwargs["strace"] = True
    if not kwargs.get("strace"):
        return None
    from ..strace.expressions import ExpressionError, apply_expression
    from ..strace.options import StraceOptions
    options = StraceOptions(follow_forks=int(kwargs.get("follow_forks") or 0),
                            output=values["s_output"], hex_strings=values["s_hex"],
                            decode_fds=values["s_fds"], xlat=values["s_xlat"] or "abbrev",
                            timestamps=values["s_time"], relative=values["s_relative"],
                            durations=values["s_durations"],
                            summary=1 if values["s_summary_only"] else 2 if values["s_summary"] else 0,
                            verbose=values["s_no_abbrev"] or bool(kwargs.get("verbose")))
    if values["s_stack"]:
        from ..strace_stacks import stack_printer
        options.stacks = stack_printer
    if values["s_strlen"] is not None:
        options.max_strlen = values["s_strlen"]
    options.syscall_numbers = values["s_numbers"]
    if values["s_column"] is not None:
        options.column = values["s_column"]
    if values["s_sort"] is not None:
        options.sort_by = values["s_sort"]
    expressions = [*values["s_expr"], *(f"trace={v}" for v in values["s_trace"]),
                   *(f"signal={v}" for v in values["s_signal"]),
                   *(f"status={v}" for v in values["s_status"]),
                   *(f"quiet={v}" for v in values["s_quiet_set"]), *_QUIET_COUNT[:values["s_quiet"]]]
    if values["s_successful"]:
        expressions.append("status=successful")
    if values["s_failed"]:
        expressions.append("status=failed")
    for expression in expressions:
        try:
            apply_expression(options, expression)
        except ExpressionError as error:
            raise click.BadParameter(str(error), param_hint=f"-e {expression}") from None
    return options
