"""Probe definitions (bpftrace's probe kinds, seed 001's providers: uprobe, uretprobe, syscall)."""
from dataclasses import dataclass, field

UPROBE, URETPROBE, SYSCALL = "uprobe", "uretprobe", "syscall"


@dataclass(frozen=True)
class ProbeSpec:
    text: str                    # exactly as the user wrote it (reported in every record)
    kind: str                    # UPROBE, URETPROBE or SYSCALL
    binary: str = ""             # the program the probe applies to (uprobe/uretprobe)
    function: str | None = None  # symbol name
    offset: int = 0              # +OFF inside the function
    address: int | None = None   # 0xADDR form
    syscall: str = ""            # syscall name

    def matches_binary(self, exe: bytes) -> bool:
        """A probe on BIN applies to a process running BIN: same path, or same file name."""
        exe_text = exe.decode(errors="replace")
        return self.binary == exe_text or self.binary.rsplit("/", 1)[-1] == exe_text.rsplit("/", 1)[-1]


@dataclass
class Probe:
    spec: ProbeSpec
    action: object = None        # Python callable(ProbeContext) or None (record only)
    native: str | None = None    # "count" or "args:N": runs inside the guest (trampoline)
    nargs: int = 6               # argument words recorded per hit
    hits: int = 0
    chosen: dict = field(default_factory=dict)   # strategy name -> sites it took (the listing)
