"""Processes and threads (the kernel's `struct proc`, after xv6's proc.h).

A Process owns an address space (its Machine and AddressSpace), an fd table, a cwd, signal
dispositions and its children. A Thread is a register context plus a kernel stack inside a
process. States are explicit so that a deadlock report can name what everybody waits for.
"""
from dataclasses import dataclass, field

from .fdtable import FdTable

# Process / thread states
RUNNABLE = "runnable"
SLEEPING = "sleeping"      # with `wait_reason`
STOPPED = "stopped"
ZOMBIE = "zombie"


@dataclass
class Thread:
    tid: int
    process: "Process"
    kstack_top: int
    context: object = None               # saved Machine context while not running
    state: str = RUNNABLE
    wait_reason: str = ""
    clear_child_tid: int = 0             # set_tid_address / CLONE_CHILD_CLEARTID
    robust_list: int = 0
    sigmask: int = 0
    sigaltstack: tuple[int, int, int] = (0, 2, 0)     # (sp, flags=SS_DISABLE, size)


@dataclass
class Process:
    pid: int
    ppid: int
    space: object                          # kernel_model.address_space.ProcessImage
    fds: FdTable
    cwd: bytes = b"/"
    umask: int = 0o022
    pgid: int = 0
    sid: int = 0
    exe: bytes = b""                       # guest path of the running executable
    argv: list[bytes] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)
    children: list["Process"] = field(default_factory=list)
    state: str = RUNNABLE
    exit_status: int | None = None         # wait status word (exit code << 8, or signal number)
    sigactions: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # sig -> (handler, flags, restorer, mask)
    rlimits: dict[int, tuple[int, int]] = field(default_factory=dict)
    unimplemented: set[str] = field(default_factory=set)

    @property
    def machine(self):
        return self.space.machine

    @property
    def vm(self):
        return self.space.vm

    @property
    def arch(self) -> str:
        return self.space.machine.arch.name

    # ---- the view the file system needs for /proc/self -------------------------------------
    def exe_path(self) -> bytes:
        return self.exe

    def maps_text(self) -> bytes:
        return self.space.vm.maps_text()

    def fd_targets(self) -> dict[int, bytes]:
        return {fd: getattr(f, "proc_link", None) or getattr(f, "path", b"") or b"anon_inode:[unknown]"
                for fd, f in self.fds.targets().items()}

    def cwd_path(self) -> bytes:
        return self.cwd
