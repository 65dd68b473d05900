"""What a debugger stop reports (GDB's stop reasons; the gdbserver turns them into T/W/X)."""
from dataclasses import dataclass

SIGINT, SIGTRAP = 2, 5

INITIAL = "initial"          # the program is loaded and has run no instruction
BREAKPOINT = "breakpoint"    # a debugger breakpoint, before its instruction runs
STEP = "step"                # one original instruction ran
INTERRUPT = "interrupt"      # the user asked for a stop (Ctrl-C)
SIGNAL = "signal"            # a signal is about to be delivered to the thread
EXITED = "exited"            # a debugged process ended (status: the wait status word)
FORK, VFORK, VFORK_DONE = "fork", "vfork", "vforkdone"
WATCH = "watch"              # a watched access (address: the watched byte; watch: its kind)
EXEC = "exec"                # a debugged process runs a new program (path: its file)


@dataclass
class StopEvent:
    kind: str
    thread: object = None            # the thread that stopped (None: a process ended)
    signal: int = SIGTRAP
    address: int | None = None       # the breakpoint's address
    process: object = None           # EXITED: the process; FORK/VFORK: the parent
    status: int = 0                  # EXITED: the wait status word
    child: object = None             # FORK/VFORK/VFORK_DONE: the child process
    watch: str = ""                  # WATCH: "write", "read" or "access"
    path: bytes = b""                # EXEC: the global path of the new program
