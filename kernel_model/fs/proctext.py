"""Text of the /proc files: fixed machine description and per-process summaries.

The machine file cpuinfo describes one fixed virtual machine so that a guest reading it
behaves the same on every host (meminfo, uptime and loadavg follow the run: machine_stats.py).
Formats follow fs/proc/array.c and arch/x86/kernel/cpu/proc.c.
"""
from typing import Protocol

from emu.cpuid import brand, cpuid, linux_flags, signature

from ..creds import ALL_CAPS, ROOT as ROOT_IDS


class ProcessView(Protocol):
    """What /proc shows about the calling process; implemented by the kernel's process object.

    Optional attributes read if present: `ppid` (int) and `comm` (bytes); without them PPid is 0
    and the command name is the executable's base name. Optional method `fd_file(fd)` returns
    the open file an fd refers to: with it, opening /proc/self/fd/N or /dev/stdout when that fd
    is a pipe gives that open file (Linux reopens the pipe); without it that fails with ENOENT.
    Optional method `root()` gives the process root's global path after a chroot (b"/" without
    it): paths resolve under it (namei.py)."""

    pid: int

    def exe_path(self) -> bytes: ...
    def maps_text(self) -> bytes: ...
    def fd_targets(self) -> dict[int, bytes]: ...
    def fdinfo(self, fd: int) -> bytes: ...
    def cwd(self) -> bytes: ...


def process_root(proc: ProcessView) -> bytes:
    root = getattr(proc, "root", None)
    return root() if root is not None else b"/"


USER_HZ = 100                # the clock_t ticks /proc and times(2) count in
TASK_COMM_LEN = 16           # include/linux/sched.h: comm holds 15 bytes and a NUL

# The modeled CPU as /proc/cpuinfo describes it: every field comes from the CPUID table the
# guest's `cpuid` answers from (emu/cpuid.py), so a program reading either sees one CPU.
_FAMILY, _MODEL, _STEPPING = signature()
_ADDRESS_BITS = cpuid(0x80000008, 0)[0]
CPU_FLAGS = " ".join(linux_flags()).encode()

# The file system types the modeled kernel has registered, as /proc/filesystems lists them
# (fs/filesystems.c filesystems_proc_show: "nodev" before a type without FS_REQUIRES_DEV, a
# tab, the name), in the reference host's kernel's registration order. libselinux reads it at
# start-up (is_selinux_enabled looks for "selinuxfs": absent, it opens no /proc/mounts), so
# dynamic coreutils read what they read natively.
FILESYSTEM_TYPES = (
    (b"nodev", b"sysfs"), (b"nodev", b"tmpfs"), (b"nodev", b"proc"), (b"nodev", b"cgroup"),
    (b"nodev", b"cgroup2"), (b"nodev", b"cpuset"), (b"nodev", b"devtmpfs"),
    (b"nodev", b"binfmt_misc"), (b"nodev", b"debugfs"), (b"nodev", b"tracefs"),
    (b"nodev", b"securityfs"), (b"nodev", b"sockfs"), (b"nodev", b"bpf"), (b"nodev", b"pipefs"),
    (b"nodev", b"ramfs"), (b"nodev", b"hugetlbfs"), (b"nodev", b"devpts"), (b"", b"ext3"),
    (b"", b"ext2"), (b"", b"ext4"), (b"", b"squashfs"), (b"nodev", b"autofs"), (b"", b"fuseblk"),
    (b"nodev", b"fuse"), (b"nodev", b"fusectl"), (b"nodev", b"overlay"), (b"", b"xfs"),
    (b"", b"erofs"), (b"nodev", b"mqueue"), (b"", b"btrfs"), (b"nodev", b"pstore"),
)
FILESYSTEMS = b"".join(b"%s\t%s\n" % entry for entry in FILESYSTEM_TYPES)

# One "processor" block: the modeled CPU count is kernel_model/cpu/cpus.py NR_CPUS.
CPUINFO = b"".join(line + b"\n" for line in [
    b"processor\t: 0",
    b"vendor_id\t: GenuineIntel",
    b"cpu family\t: %d" % _FAMILY,
    b"model\t\t: %d" % _MODEL,
    b"model name\t: " + brand().encode(),
    b"stepping\t: %d" % _STEPPING,
    b"cpu MHz\t\t: 1000.000",
    b"cache size\t: 4096 KB",
    b"physical id\t: 0",
    b"siblings\t: 1",
    b"core id\t\t: 0",
    b"cpu cores\t: 1",
    b"fpu\t\t: yes",
    b"fpu_exception\t: yes",
    b"cpuid level\t: %d" % cpuid(0, 0)[0],
    b"wp\t\t: yes",
    b"flags\t\t: " + CPU_FLAGS,
    b"bogomips\t: 2000.00",
    b"clflush size\t: 64",
    b"cache_alignment\t: 64",
    b"address sizes\t: %d bits physical, %d bits virtual" % (_ADDRESS_BITS & 0xFF, _ADDRESS_BITS >> 8 & 0xFF),
    b"",
])

def comm_of(proc: ProcessView) -> bytes:
    comm = getattr(proc, "comm", None)
    if comm is None:
        comm = proc.exe_path().rsplit(b"/", 1)[-1]
    return comm[:TASK_COMM_LEN - 1]


def ppid_of(proc: ProcessView) -> int:
    return int(getattr(proc, "ppid", 0))


def state_of(proc: ProcessView) -> tuple[bytes, bytes]:
    """(letter, word) of the process's state; running when the view does not say."""
    state = getattr(proc, "state", None)
    return state() if state is not None else (b"R", b"running")


def stat_line(proc: ProcessView, cpu_ns: int = 0) -> bytes:
    """/proc/PID/stat: the 52 fields of fs/proc/array.c do_task_stat(); the ones the model has
    no notion of (fault counts, system and children's times, addresses) are 0. utime is the
    model's CPU clock `cpu_ns` (times(2)'s user time) in USER_HZ ticks (nsec_to_clock_t):
    programs wait for it to move (LTP clock_gettime01 reads it until it is not 0)."""
    pid = proc.pid
    group, session = getattr(proc, "pgid", pid), getattr(proc, "sid", pid)
    fields = [pid, b"(" + comm_of(proc) + b")", state_of(proc)[0], ppid_of(proc), group, session,
              0, -1, 0,                      # 7-9 tty_nr, tpgid (no terminal), flags
              0, 0, 0, 0,                    # 10-13 fault counts
              cpu_ns * USER_HZ // 10**9, 0, 0, 0,   # 14-17 utime, stime, cutime, cstime
              20, 0, 1, 0,                   # 18-21 priority, nice, num_threads, itrealvalue
              0, 0, 0, 2**64 - 1,            # 22-25 starttime, vsize, rss, rsslim=RLIM_INFINITY
              0, 0, 0, 0, 0,                 # 26-30 code and stack addresses
              0, 0, 0, 0, 0, 0, 0,           # 31-37 signal masks, wchan, nswap, cnswap
              17, 0, 0, 0, 0, 0, 0,          # 38-44 exit_signal=SIGCHLD, processor ..
              0, 0, 0, 0, 0, 0, 0,           # 45-51 data, brk, arg and env addresses
              0]                             # 52 exit_code
    fields = [f if isinstance(f, bytes) else b"%d" % f for f in fields]
    return b" ".join(fields) + b"\n"


def memory_lines(proc: ProcessView) -> list[bytes]:
    """The Vm* lines of /proc/PID/status (fs/proc/task_mmu.c task_mem: "%8lu kB"), from the
    optional `memory_status()` of the view: (name, bytes) pairs."""
    status = getattr(proc, "memory_status", None)
    if status is None:
        return []
    return [b"%s:\t%8d kB" % (name, size >> 10) for name, size in status()]


def namespace_id_lines(proc: ProcessView) -> list[bytes]:
    """NStgid, NSpid, NSpgid, NSsid (task_state): the ids in every pid namespace from /proc's
    (the initial one) down to the task's own (the view's pid_numbers(); one level without)."""
    numbers = getattr(proc, "pid_numbers", None)
    levels = numbers() if numbers is not None else {
        key: (getattr(proc, attr, proc.pid),) for key, attr in
        ((b"NStgid", "pid"), (b"NSpid", "pid"), (b"NSpgid", "pgid"), (b"NSsid", "sid"))}
    return [key + b":\t" + b"\t".join(b"%d" % n for n in levels[key])
            for key in (b"NStgid", b"NSpid", b"NSpgid", b"NSsid")]


def status_text(proc: ProcessView) -> bytes:
    """/proc/PID/status (fs/proc/array.c proc_pid_status) as far as the model knows the task:
    the ids of its credentials (task_state: real, effective, saved, file-system), its umask,
    supplementary groups (each then a space: the trailing one Linux keeps), its tracer's pid
    (the view's `tracer_pid`, 0 without: kernel_model/ptraced.py), thread count and
    capability sets (task_cap; the bounding set is every capability, the model has no
    other). A view without credentials (init's, a test's) shows root's."""
    creds = getattr(proc, "creds", None) or ROOT_IDS
    lines = [
        b"Name:\t" + comm_of(proc),
        b"Umask:\t%04o" % getattr(proc, "umask", 0o022),
        b"State:\t%s (%s)" % state_of(proc),
        b"Tgid:\t%d" % proc.pid,
        b"Ngid:\t0",
        b"Pid:\t%d" % proc.pid,
        b"PPid:\t%d" % ppid_of(proc),
        b"TracerPid:\t%d" % getattr(proc, "tracer_pid", 0),
        b"Uid:\t%d\t%d\t%d\t%d" % (creds.uid, creds.euid, creds.suid, creds.fsuid),
        b"Gid:\t%d\t%d\t%d\t%d" % (creds.gid, creds.egid, creds.sgid, creds.fsgid),
        b"FDSize:\t64",
        b"Groups:\t" + (b"".join(b"%d " % g for g in getattr(proc, "groups", ())) or b" "),
        *namespace_id_lines(proc),
        *memory_lines(proc),
        b"Threads:\t%d" % getattr(proc, "thread_count", 1),
        b"CapInh:\t%016x" % creds.inheritable,
        b"CapPrm:\t%016x" % creds.permitted,
        b"CapEff:\t%016x" % creds.effective,
        b"CapBnd:\t%016x" % ALL_CAPS,
        b"CapAmb:\t%016x" % 0,
    ]
    return b"".join(line + b"\n" for line in lines)
