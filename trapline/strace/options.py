"""What strace's command-line options ask for, once parsed (strace(1) 6.x spelling).

trapline/cli/strace_options.py reads them off the command line; the client (client.py) and the
formatter (syscall_line.py, strings.py) read this one object. `-e trace=`, `-e signal=` and
`-e status=` are parsed here (expressions.py holds the syscall classes they name).
"""
from dataclasses import dataclass, field

from .strings import MAX_STRLEN

STATUSES = ("successful", "failed", "unfinished", "unavailable", "detached")
# -e quiet=SET (strace 6.x): the sandbox prints no attach, personality or path-resolution
# messages anyway; "exit" silences `+++ exited with N +++` (not `+++ killed by SIG +++`)
QUIET_KINDS = ("attach", "exit", "path-resolution", "personality", "thread-execve",
               "superseded")


@dataclass
class StraceOptions:
    follow_forks: int = 0                 # -f: 1; -ff: 2 (one file per process with -o)
    output: str | None = None             # -o FILE (with -ff: FILE.PID)
    max_strlen: int = MAX_STRLEN          # -s N
    traced: frozenset[str] | None = None  # -e trace=SET; None: every call
    signals: frozenset[int] | None = None  # -e signal=SET; None: every signal
    statuses: frozenset[str] = frozenset(STATUSES)   # -e status=SET, -z, -Z
    verbose: bool = False                 # -v: execve's environment in full
    abbreviated: frozenset[str] | None = None   # -e abbrev=SET; None: every call (unless -v)
    raw: frozenset[str] = frozenset()     # -e raw=SET: these calls' arguments in hex
    dumped_reads: object = None           # -e read=SET: io_dumps.FdSet, None: no dumps
    dumped_writes: object = None          # -e write=SET
    hex_strings: int = 0                  # -x: non-ASCII strings in hex; -xx: every string
    xlat: str = "abbrev"                  # -X raw|abbrev|verbose: constants as numbers/names
    decode_fds: int = 0                   # -y: descriptors with their paths; -yy: socket, device details
    summary: int = 0                      # -c: the table only; -C: the lines and the table
    sort_by: str = "time"                 # -S: the table's order (summary.SORT_KEYS)
    quiet: frozenset[str] | None = None   # -q, -qq, -e quiet=: QUIET_KINDS not to print
    timestamps: int = 0                   # -t, -tt, -ttt (on the virtual clock)
    relative: bool = False                # -r (on the virtual clock)
    durations: bool = False               # -T (on the virtual clock)
    column: int = 40                      # -a COLUMN: where `= ` starts
    syscall_numbers: bool = False         # -n: `[  59] ` before each line
    stacks: object = None                 # -k: debug -> (thread -> lines), trapline/strace_stacks.py
    errors: list[str] = field(default_factory=list)

    def traces(self, name: str) -> bool:
        return self.traced is None or name in self.traced

    def unabbreviated(self, name: str) -> bool:
        """-v, or a call -e abbrev=SET leaves out: structures and arrays in full."""
        return self.verbose or (self.abbreviated is not None and name not in self.abbreviated)

    def quiets(self, kind: str) -> bool:
        """Whether -q/-e quiet= silences `kind`; without them strace(1)'s own default: attach
        and personality messages are quiet "when output is redirected to a file and the
        command is run directly" (-o FILE)."""
        if self.quiet is None:
            return self.output is not None and kind in ("attach", "personality")
        return kind in self.quiet

    def shows_status(self, failed: bool) -> bool:
        return ("failed" if failed else "successful") in self.statuses
