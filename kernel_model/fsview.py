"""The file system's view of a process (what /proc/self shows), kept apart from the kernel.

The model keeps paths global; the view shows them from the process's root (fs/rootpath.py).
"""
from .fs.fdinfo import fdinfo_text
from .fs.rootpath import link_text
from .time_namespace import CAP_SYS_TIME

# fs/proc/array.c task_state_array: the letter and the word /proc/PID/stat and status show,
# by process/proc.py's state names (spelled here: process/ imports this module's users)
STATE_NAMES = {"runnable": (b"R", b"running"), "sleeping": (b"S", b"sleeping"),
               "stopped": (b"T", b"stopped"), "zombie": (b"Z", b"zombie")}


class FsView:
    """The file system's view of a process (for /proc/self)."""

    def __init__(self, proc):
        self._proc = proc
        self.pid = proc.pid

    @property
    def process(self):
        """The process itself (a /proc/PID folder stays its, as Linux's holds its struct pid)."""
        return self._proc

    def exe_path(self) -> bytes:
        return link_text(self._proc.exe, self._proc.root)

    def maps_text(self) -> bytes:
        return self._proc.maps_text() if self._proc.space else b""

    def smaps_text(self) -> bytes:
        return self._proc.smaps_text() if self._proc.space else b""

    def pagemap(self, first_page: int, count: int) -> bytes:
        """/proc/PID/pagemap's words (memory/pagemap.py); zeros once the memory is gone."""
        space = self._proc.space
        if space is None or space.released:
            return bytes(8 * count)
        return self._proc.pagemap(first_page, count)

    def user_pages(self) -> int:
        space = self._proc.space
        return space.layout.user_top // 4096 if space is not None else 0

    def memory_status(self) -> list[tuple[bytes, int]]:
        """/proc/PID/status's Vm* sizes (none for a zombie, whose memory is gone)."""
        return self._proc.memory_status() if self._proc.space else []

    def timer_slack_ns(self) -> int:
        """The thread group leader's timer slack (PR_SET_TIMERSLACK)."""
        threads = self._proc.threads
        return threads[0].task_flags.timer_slack_ns if threads else 0

    def time_namespaces(self) -> tuple:
        """Its time namespace and its children's (time_namespace.py)."""
        return self._proc.time_ns, self._proc.time_ns_for_children

    def namespaces(self) -> dict:
        """Its namespaces of the kinds the model has more than one of, by /proc/PID/ns name."""
        proc = self._proc
        return {b"time": proc.time_ns, b"time_for_children": proc.time_ns_for_children,
                b"pid": proc.pid_ns, b"pid_for_children": proc.pid_ns_for_children,
                b"user": proc.creds.user_ns, b"net": proc.net_ns, b"mnt": proc.mount_ns,
                b"uts": proc.uts_ns, b"ipc": proc.ipc_ns}

    def pid_numbers(self) -> dict:
        """/proc/PID/status's NS* lines: the numbers of its tgid, pid (a task's tid), process
        group and session in each pid namespace from the initial one down to its own
        (pid_namespace.py; 0 where the namespace does not see it)."""
        levels = list(self._proc.pid_ns.ancestors())[::-1]
        ids = {b"NStgid": self._proc.pid, b"NSpid": self.pid, b"NSpgid": self.pgid, b"NSsid": self.sid}
        return {key: tuple(ns.nr(value) for ns in levels) for key, value in ids.items()}

    def dump_owner(self) -> tuple[int, int]:
        """task_dump_owner: its effective ids while dumpable (PR_SET_DUMPABLE), else root's."""
        threads, creds = self._proc.threads, self._proc.creds
        dumpable = threads[0].task_flags.dumpable if threads else 1
        return (creds.euid, creds.egid) if dumpable == 1 else (0, 0)

    def timens_offsets(self) -> bytes:
        return self._proc.time_ns_for_children.show()

    def set_timens_offsets(self, position: int, data: bytes) -> int:
        """The offsets of its children's namespace, by a holder of CAP_SYS_TIME."""
        return self._proc.time_ns_for_children.write(data, self._proc.creds.capable(CAP_SYS_TIME))

    def fd_targets(self) -> dict[int, bytes]:
        root = self._proc.root
        return {fd: link_text(target, root) for fd, target in self._proc.fd_targets().items()}

    def fd_file(self, fd: int):
        """The open file behind /proc/self/fd/N (what /dev/stdout reopens)."""
        entry = self._proc.fds.entries.get(fd)
        return entry.file if entry else None

    def fdinfo(self, fd: int) -> bytes:
        """/proc/self/fdinfo/N's text (fs/fdinfo.py); empty once the fd is closed."""
        entry = self._proc.fds.entries.get(fd)
        return fdinfo_text(entry.file, entry.cloexec) if entry else b""

    def cwd(self) -> bytes:
        return link_text(self._proc.cwd, self._proc.root)

    def root(self) -> bytes:
        """The process root's global path (namei.py resolves under it)."""
        return self._proc.root

    @property
    def mount_ns(self):
        """Its mount namespace (fs/mount_table.py), None for the initial one."""
        return self._proc.mount_ns

    def namespace(self, kind: bytes):
        """Its namespace of a kind /proc/PID/ns names (process/namespaces.py), None for the
        run's first one."""
        name = {b"mnt": "mount_ns", b"uts": "uts_ns", b"ipc": "ipc_ns"}.get(kind)
        return getattr(self._proc, name) if name else None

    @property
    def ppid(self) -> int:
        return self._proc.ppid

    @property
    def creds(self):
        """The credentials the file system checks permissions with (fs/permission.py)."""
        return self._proc.creds

    @property
    def groups(self) -> tuple:
        return self._proc.groups

    @property
    def umask(self) -> int:
        return self._proc.umask

    @property
    def tracer_pid(self) -> int:
        """TracerPid: in /proc/PID/status: its leader's tracer (kernel_model/ptraced.py)."""
        threads = self._proc.threads
        return _tracer_pid(threads[0]) if threads else 0

    @property
    def thread_count(self) -> int:
        """Threads: in /proc/PID/status (the live ones; a zombie's leader counts as one)."""
        return max(len(self._proc.live_threads()), 1)

    @property
    def pgid(self) -> int:
        return self._proc.pgid or self._proc.pid

    @property
    def sid(self) -> int:
        return self._proc.sid or self._proc.pid

    def state(self) -> tuple[bytes, bytes]:
        """The process's state as /proc shows it: its leader thread's (get_task_state of the
        thread group leader), Z once the process has exited."""
        proc = self._proc
        if proc.state == "zombie" or not proc.threads:
            return STATE_NAMES["zombie"]
        return STATE_NAMES.get(proc.threads[0].state, STATE_NAMES["runnable"])

    @property
    def comm(self) -> bytes | None:
        """The leader thread's comm (prctl PR_SET_NAME), None for the executable's name."""
        threads = self._proc.threads
        return threads[0].comm or None if threads else None

    def tasks(self) -> list["TaskFsView"]:
        """/proc/PID/task/: every live thread of the process (fs/proc/base.c proc_task_readdir)."""
        return [TaskFsView(self._proc, t) for t in self._proc.threads if t.state != "zombie"]


class InitView:
    """/proc/1: the sandbox's init, parent of the run's first process and of every orphan. The
    model has no process for it (it only reaps), so its view is fixed: pid 1 with no parent,
    the leader of its own group and session, asleep (in wait), root's credentials, no open
    files, its name "init" (LTP's getpgid01 reads its stat, tst_get_free_pids its status)."""

    pid = pgid = sid = 1
    ppid = 0
    comm = b"init"
    creds = None                      # root's (fs/permission.py access_of)
    groups = ()

    def exe_path(self) -> bytes:
        return b"/sbin/init"

    def maps_text(self) -> bytes:
        return b""

    def fd_targets(self) -> dict[int, bytes]:
        return {}

    def fdinfo(self, fd: int) -> bytes:
        return b""

    def cwd(self) -> bytes:
        return b"/"

    def state(self) -> tuple[bytes, bytes]:
        return STATE_NAMES["sleeping"]

    def tasks(self) -> list:
        """/proc/1/task/1: init's one thread, itself."""
        return [self]


class TaskFsView(FsView):
    """One thread as /proc/PID/task/TID shows it: its tid, state and comm, the rest its
    process's."""

    def __init__(self, proc, thread):
        super().__init__(proc)
        self._thread = thread
        self.pid = thread.tid

    @property
    def comm(self) -> bytes | None:
        return self._thread.comm or None

    def state(self) -> tuple[bytes, bytes]:
        return STATE_NAMES.get(self._thread.state, STATE_NAMES["runnable"])

    @property
    def tracer_pid(self) -> int:
        return _tracer_pid(self._thread)


class GlobalFsView(FsView):
    """The same process resolving a global path (an open file's, a canonical one the model
    computed): from the guest root whatever the process root is."""

    def root(self) -> bytes:
        return b"/"


INIT_VIEW = InitView()


def _tracer_pid(thread) -> int:
    """The tracer of a ptraced thread, 0 for the others (whose reader needs no ptrace module)."""
    if not thread.ptrace:
        return 0
    from .ptraced import tracer_pid
    return tracer_pid(thread)


def fs_view(proc) -> FsView:
    return FsView(proc)


def global_view(proc) -> FsView:
    return GlobalFsView(proc)
