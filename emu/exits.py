"""Why `Machine.run()` returned. The kernel's run loop switches on `Exit.kind`."""
from dataclasses import dataclass

# Exit kinds
TRAP = "trap"          # an interrupt or exception vector the trap handler asked to take outside hooks
SYSCALL = "syscall"    # a syscall the handler deferred to outside the hook (x86-64 `syscall`)
FAULT = "fault"        # a memory access the address space does not allow
BUDGET = "budget"      # the instruction budget of this run slice was used up
STOPPED = "stopped"    # stop() was requested (e.g. by a handler that needs the world to change)

# Access kinds of a memory fault
READ, WRITE, FETCH = "read", "write", "fetch"


@dataclass(frozen=True)
class Exit:
    kind: str
    pc: int
    vector: int | None = None        # TRAP: vector number (3 = #BP, 6 = #UD, 0x80 = int 0x80 ...)
    address: int | None = None       # FAULT: faulting data address
    access: str | None = None        # FAULT: READ, WRITE or FETCH
    unmapped: bool = False           # FAULT: True for not-present, False for protection violation
