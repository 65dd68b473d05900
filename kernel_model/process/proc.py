"""Processes and threads (the kernel's `struct proc`, after xv6's proc.h).

A Process owns an address space (a Space: Machine + page mapper + GDT/IDT), an fd table, a cwd,
signal dispositions and its children. A Thread is a register context plus a kernel stack inside
a process. Threads of one process, and a vfork child until it execs or exits, share one Space.
States are explicit so that a deadlock report can name what everybody waits for.
"""
from dataclasses import dataclass, field

from ..fdtable import FdTable
from ..fs.openfile import fd_link_text
from ..creds import ROOT, Credentials
from ..time_namespace import INITIAL as INITIAL_TIME_NS, TimeNamespace
from ..pid_namespace import INITIAL as INITIAL_PID_NS, PidNamespace
from .clone_fs import FsStruct
from .task_flags import TaskFlags
from ..memory.pagemap import pagemap_entries
from ..memory.smaps import smaps_text

# Process / thread states
RUNNABLE = "runnable"
SLEEPING = "sleeping"      # on `wait_channels`, for `wait_reason`
STOPPED = "stopped"
ZOMBIE = "zombie"          # process: exited, not yet reaped; thread: exited
INIT_PID = 1               # the virtual init that adopts orphans and reaps them



# Slots: every system call reads and writes a dozen fields of its Thread and Process. CPython
# 3.11 keeps an instance's attributes in its class's shared key table only up to 30 names
# (Objects/dictobject.c SHARED_KEYS_MAX_SIZE); both classes have more, so each instance got a
# dict of its own and every field access its slower dict lookup. A slot is an offset.
@dataclass(eq=False, slots=True, weakref_slot=True)
class Thread:
    """A register context and a kernel stack inside a process, with what it waits for."""
    tid: int
    process: "Process"
    kstack_top: int
    context: object = None               # saved Machine context while not running
    state: str = RUNNABLE
    wait_reason: str = ""
    wait_channels: tuple = ()            # what wakeup() must name to make it runnable again
    deadline_ns: int | None = None       # virtual time at which a timed sleep ends
    restart: dict = field(default_factory=dict)   # state kept across re-executions of a blocked call
    clear_child_tid: int = 0             # set_tid_address / CLONE_CHILD_CLEARTID
    robust_list: int = 0
    sigmask: int = 0
    pending_signals: int = 0             # thread-directed (tgkill, faults)
    held_signals: int = 0                # kept pending by a tool for a moment (debug/suspend.py)
    sigaltstack: tuple[int, int, int] = (0, 2, 0)     # (sp, flags=SS_DISABLE, size)
    tls: dict = field(default_factory=dict)   # i386: GDT index -> descriptor of this thread's TLS
    comm: bytes = b""
    pending_fault: object = None
    deferred: bool = False               # a syscall waits to run outside Unicorn's hooks
    blocked_call: str | None = None      # the syscall this thread sleeps in (for EINTR/restart)
    syscall_abi: str = ""                # the ABI of the call a debug watcher is told of (TS_COMPAT)
    saved_sigmask: int | None = None     # the caller's mask while sigsuspend & co. run with another
    saved_contexts: list = field(default_factory=list)   # (frame address, full context) per handler
    interrupted: bool = False
    nice: int = 0                        # -20..19 (setpriority); fork copies it, as sched_fork
    ioprio: int = 0                      # ioprio_set's value; 0 = IOPRIO_CLASS_NONE (never set)
    sched_policy: int = 0                # SCHED_NORMAL (| SCHED_RESET_ON_FORK) (sched_attrs.py)
    rt_priority: int = 0
    dl: tuple = (0, 0, 0)                # SCHED_DEADLINE runtime, deadline, period ns (sched_deadline.py)
    utime_ns: int = 0                    # CPU time, user and system (time/task_times.py)
    stime_ns: int = 0
    suspended: int = 0                   # tools' holds (debug.suspend_thread): never picked while > 0
    instructions: int = 0                # its finished slices' instructions, when counted (time/cpu_time.py)
    turn_used: int = 0                   # instructions of its quantum used this turn (sched.py)
    task_flags: TaskFlags = TaskFlags()  # what prctl sets (task_flags.py)
    ptrace: int = 0                      # task->ptrace: a tool ptraces it (kernel_model/ptraced.py)

    def describe(self) -> str:
        return f"pid {self.process.pid} tid {self.tid}"


@dataclass(eq=False, slots=True, weakref_slot=True)
class Process:
    """A process: its address space, fds, ids, signal state, children and threads."""
    pid: int
    ppid: int
    space: object                          # kernel_model.memory.space.Space
    fds: FdTable
    cwd: bytes = b"/"                      # global guest path (may lie outside `root`)
    root: bytes = b"/"                     # global guest path of the root chroot(2) gave
    umask: int = 0o022
    fs_struct: FsStruct = field(default_factory=FsStruct)   # who shares the three (clone_fs.py)
    pgid: int = 0
    sid: int = 0
    exe: bytes = b""                       # guest path of the running executable
    argv: list[bytes] = field(default_factory=list)
    image: object = None                   # the LoadedImage running (for symbolization)
    threads: list[Thread] = field(default_factory=list)
    children: list["Process"] = field(default_factory=list)
    state: str = RUNNABLE
    exit_status: int | None = None         # wait status word (exit code << 8, or signal number)
    sigactions: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # sig -> (handler, flags, restorer, mask)
    pending_signals: int = 0               # process-directed (kill)
    siginfo: dict = field(default_factory=dict)   # signal -> what its siginfo_t will say
    rt_queue: dict = field(default_factory=dict)  # real-time signal -> [(thread or None, siginfo)]
    itimer_real: tuple[int, int] | None = None    # (deadline ns, interval ns) of ITIMER_REAL
    itimer_cpu: dict = field(default_factory=dict)     # ITIMER_VIRTUAL/PROF -> (deadline, interval)
    posix_timers: dict = field(default_factory=dict)   # timer id -> time/posix_timers.PosixTimer
    did_exec: bool = False                 # it ran execve since its fork (setpgid's EACCES)
    start_ns: int = 0                      # the monotonic clock at its fork (acct.py's run time)
    rlimits: dict[int, tuple[int, int]] = field(default_factory=dict)
    vfork_parent: Thread | None = None     # the parent thread sleeping until we exec or exit
    exit_signal: int = 17                  # SIGCHLD unless clone said otherwise
    personality: int = 0                   # personality(2); fork copies it (kernel_model/personality.py)
    groups: tuple = ()                     # supplementary gids (setgroups); fork and exec keep them
    creds: Credentials = ROOT              # ids and capabilities (creds.py); fork copies them
    time_ns: TimeNamespace = INITIAL_TIME_NS        # its clocks' offsets (time_namespace.py)
    time_ns_for_children: TimeNamespace = INITIAL_TIME_NS   # unshare(CLONE_NEWTIME) sets it
    mount_ns: object = None                # its namespaces (process/namespaces.py): mounts,
    uts_ns: object = None                  # UTS names and System V IPC; None: the run's
    ipc_ns: object = None                  # first of each kind
    pid_ns: PidNamespace = INITIAL_PID_NS             # the one its pid is in (pid_namespace.py)
    pid_ns_for_children: PidNamespace = INITIAL_PID_NS      # unshare(CLONE_NEWPID) sets it
    net_ns: object = None                  # its network namespace (net/namespace.py), None: the initial
    sem_undo: dict = field(default_factory=dict)   # (semid, semnum) -> SEM_UNDO adjustment
    shm_attached: dict = field(default_factory=dict)   # address -> SysV segment (shmat)
    child_subreaper: bool = False          # PR_SET_CHILD_SUBREAPER: adopts orphaned descendants
    utime_ns: int = 0                      # CPU time of its threads and of its waited-for
    stime_ns: int = 0                      # children, user and system (time/task_times.py)
    cutime_ns: int = 0
    cstime_ns: int = 0
    stop_report: tuple | None = None       # what wait will say of a stop or continue (job_control.py)

    @property
    def machine(self):
        return self.space.machine

    @property
    def vm(self):
        return self.space.vm

    @property
    def arch(self) -> str:
        return self.space.machine.arch.name

    def live_threads(self) -> list[Thread]:
        return [t for t in self.threads if t.state != ZOMBIE]

    # ---- the view the file system needs for /proc/self -------------------------------------
    def maps_text(self) -> bytes:
        return self.space.vm.maps_text()

    def smaps_text(self) -> bytes:
        return smaps_text(self.space.vm)

    def pagemap(self, first_page: int, count: int) -> bytes:
        return pagemap_entries(self.space.vm, first_page, count)

    def memory_status(self) -> list[tuple[bytes, int]]:
        """/proc/PID/status's memory sizes the model knows, in bytes, in task_mem's order:
        VmSize (every mapped byte), VmLck (the VM_LOCKED areas), VmPin (nothing is pinned)."""
        vm = self.space.vm
        return [(b"VmSize", vm.mapped_bytes()), (b"VmLck", vm.locked_bytes()), (b"VmPin", 0)]

    def fd_targets(self) -> dict[int, bytes]:
        return {fd: fd_link_text(f) for fd, f in self.fds.targets().items()}
