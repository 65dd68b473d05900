"""Probe definitions (bpftrace's probe kinds, US 7,350,196's providers: uprobe, uretprobe, syscall;
proc and signal, which fire on the debug interface's process events; profile, which fires on the
profiling timer: US 7,823,129).

A probe is enabled while the session has it (instrumenter/tracing/session.py); `enable_at` and
`disable_at` say when, in guest instructions on the run's clock (the records' `ts`): the probe
sees the hits with enable_at < ts <= disable_at (instrumenter/tracing/dynamic.py).
"""
from dataclasses import dataclass, field

UPROBE, URETPROBE, SYSCALL = "uprobe", "uretprobe", "syscall"
PROC, SIGNAL, PROFILE = "proc", "signal", "profile"
PROC_EVENTS = ("fork", "vfork", "exec", "exit")


@dataclass(frozen=True)
class ProbeSpec:
    text: str                    # exactly as the user wrote it (reported in every record)
    kind: str                    # UPROBE, URETPROBE, SYSCALL, PROC or SIGNAL
    binary: str = ""             # the program the probe applies to (uprobe/uretprobe)
    function: str | None = None  # symbol name
    offset: int = 0              # +OFF inside the function
    address: int | None = None   # 0xADDR form
    syscall: str = ""            # syscall name
    event: str = ""              # proc: one of PROC_EVENTS
    signal: int = 0              # signal: its number (1..64)
    interval: int = 0            # profile: every N events (instrumenter/profiler/probe_source.py)
    stack: bool = False          # profile: record the unwound stack too

    def matches_binary(self, exe: bytes) -> bool:
        """A probe on BIN applies to a process running BIN: same path, or same file name."""
        exe_text = exe.decode(errors="replace")
        return self.binary == exe_text or self.binary.rsplit("/", 1)[-1] == exe_text.rsplit("/", 1)[-1]


@dataclass(eq=False)
class Probe:
    spec: ProbeSpec
    action: object = None        # Python callable(ProbeContext) or None (record only)
    native: str | None = None    # "count" or "args:N": runs inside the guest (trampoline)
    handler: object = None       # a user handler (strategies/handlers/user.py), called in-page
    nargs: int = 6               # argument words recorded per hit
    hits: int = 0
    chosen: dict = field(default_factory=dict)   # strategy name -> sites it took (the listing)
    enable_at: int = 0           # guest instructions: placed once the clock has passed it
    disable_at: int | None = None   # removed once the clock reaches it (None: never)
    enabled: bool = True         # the session has it placed (or pending on a library)
    removable: bool = False      # may be taken out: placed only by strategies that can
    placements: list = field(default_factory=list, repr=False)   # dynamic.py's Placement rows
    # a uretprobe whose action pairs the frames of a tail-call chain itself (the walk-up's
    # exit: profiler/hooks.py Activations.leave): one hit per return through the landing,
    # not one per chained frame (tracing/uretprobes.py)
    closes_chains: bool = False
