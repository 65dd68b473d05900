"""/proc: the entries common programs read, built from the calling process's ProcessView.

/proc/self is a symlink to the calling process's pid (as in Linux), /proc/PID is the directory of
every process of the run (`ProcFs.processes`, which the kernel sets; without it only the
caller's), a zombie's too until it is reaped. /proc/PID/exe, cwd and fd/N are
symlinks whose targets are guest paths or Linux's "pipe:[N]" style names. Like Linux's magic
links, opening or stat'ing /proc/PID/fd/N (so also /dev/stdout...) for an fd without a path
reaches the open file itself, through the optional `ProcessView.fd_file(fd)`. Nodes are rebuilt on every lookup from the live process state, but inode
numbers stay stable: they are allocated per proc path on first sight.
"""
from typing import Callable

from .constants import PROC_DEV, S_IFDIR, S_IFLNK, S_IFREG
from .inodes import InodeTable
from .node import Node
from .procpagemap import PagemapFile
from .mountinfo import mountinfo_text
from .procsys import Sysctl, sysctl_table
from ..time_namespace import CLOCK_BOOTTIME
from .nsfs import LINKS, NamespaceFile, link_text
from .proc_idmaps import IDMAP_NAMES, idmap_files
from .proc_clocks import ProcClocks
from .proctext import (CPUINFO, FILESYSTEMS, ProcessView, comm_of, stat_line,
                       status_text)
from .synthetic import GeneratedFile, LazyDir, SyntheticDir, SyntheticSymlink, synthetic_meta

# The modeled mounts, as /proc/PID/mounts lists them (fs/proc_namespace.c show_vfsmnt): the
# rootfs as an overlay (statfs answers OVERLAYFS_SUPER_MAGIC, syscalls/impls/statfs.py), and
# the /proc and /dev the file system mounts over it, with the flags statfs reports.
MOUNTS = (b"overlay / overlay rw,relatime 0 0\n"
          b"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
          b"devtmpfs /dev devtmpfs rw,nosuid,relatime,mode=755 0 0\n")


class ProcFs:
    def __init__(self):
        self.table = InodeTable(first=1)
        self.table.for_key(b"/")          # the mount root is inode 1, as PROC_ROOT_INO
        self.sysctl: dict[bytes, Sysctl] = {}         # the kernel's own /proc/sys values
        self.files: dict[bytes, Callable[[], bytes]] = {}    # other files the kernel adds
        # Every process's view by pid (the kernel sets it): without it only the caller shows.
        self.processes: Callable[[], dict[int, ProcessView]] | None = None
        # The processes' CPU clock and the time since boot (the kernel sets them): /proc/PID/
        # stat's utime, /proc/uptime.
        self.clocks = ProcClocks(lambda: 0, lambda: 0, lambda: 0)
        # A process's mounts (the file system's: fs/mount_points.py), the first three alone
        # without one: mountinfo (True) or mounts (False)
        self.mount_text = lambda proc, info: mountinfo_text() if info else MOUNTS

    def root(self, proc: ProcessView) -> SyntheticDir:
        return _ProcRoot(self, proc)

    def dir(self, path: bytes, children: dict[bytes, Node], ordered: bool = False) -> SyntheticDir:
        return SyntheticDir("proc", self._meta(path, S_IFDIR, 0o555), children, ordered)

    def link(self, path: bytes, target) -> SyntheticSymlink:
        return SyntheticSymlink("proc", self._meta(path, S_IFLNK, 0o777), target)

    def file(self, path: bytes, text, perm: int = 0o444, write=None) -> GeneratedFile:
        return GeneratedFile("proc", self._meta(path, S_IFREG, perm), text, write)

    def sysctl_file(self, path: bytes, entry: Sysctl) -> GeneratedFile:
        """A /proc/sys file: its value and a newline; root may write a writable one."""
        text = entry.text
        return self.file(path, lambda: text() + b"\n", entry.perm, entry.write)

    def pagemap(self, path: bytes, entries, pages: int) -> PagemapFile:
        return PagemapFile("proc", self._meta(path, S_IFREG, 0o400), entries, pages)

    def forget_process(self, pid: int) -> None:
        """A reaped pid's /proc entries: a later process with the same pid gets new inodes
        (proc_pid_make_inode numbers each new one)."""
        self.table.forget_where(lambda key: key == b"/%d" % pid
                                or isinstance(key, bytes) and key.startswith(b"/%d/" % pid))

    def _meta(self, path: bytes, fmt: int, perm: int):
        return synthetic_meta(PROC_DEV, self.table.for_key(path), fmt, perm)


class _ProcRoot(LazyDir):
    def __init__(self, procfs: ProcFs, proc: ProcessView):
        super().__init__("proc", procfs._meta(b"/", S_IFDIR, 0o555), self._makers_now)
        self._procfs = procfs
        self._proc = proc

    def _makers_now(self) -> dict:
        fs, proc = self._procfs, self._proc
        pid = b"%d" % proc.pid
        return {
            b"cpuinfo": lambda: fs.file(b"/cpuinfo", lambda: CPUINFO),
            b"filesystems": lambda: fs.file(b"/filesystems", lambda: FILESYSTEMS),
            b"uptime": lambda: fs.file(b"/uptime", lambda: uptime_text(fs.clocks, proc)),
            b"mounts": lambda: fs.link(b"/mounts", lambda: b"self/mounts"),   # as proc_root
            b"self": lambda: fs.link(b"/self", lambda: pid),
            b"sys": lambda: _sys_dir(fs),
            **{name: lambda name=name: _tree(fs, b"", _under(fs.files, name))[name]
               for name in dict.fromkeys(path.split(b"/")[0] for path in sorted(fs.files))},
            **{b"%d" % other.pid: lambda other=other: _process_dir(fs, other, proc)
               for other in self._others()},
            pid: lambda: _process_dir(fs, proc, proc),
        }

    def _others(self) -> list[ProcessView]:
        listing = self._procfs.processes
        return [view for p, view in sorted(listing().items()) if p != self._proc.pid] if listing else []


def uptime_text(clocks: ProcClocks, proc: ProcessView) -> bytes:
    """/proc/uptime (fs/proc/uptime.c): the time since boot in the reader's time namespace
    (timens_add_boottime) and the idle CPUs' time (time/clock.py: the hour before the run and
    every wait for a deadline; not shifted, as Linux does not), in hundredths; sysinfo(2)
    reads the same clock (machine_stats.py)."""
    boot_ns, idle_ns = clocks.boot_ns(), clocks.idle_ns()
    namespaces = getattr(proc, "time_namespaces", None)
    if namespaces is not None:
        boot_ns += namespaces()[0].offset(CLOCK_BOOTTIME)
    return b"%d.%02d %d.%02d\n" % (boot_ns // 10**9, boot_ns % 10**9 // 10**7,
                                    idle_ns // 10**9, idle_ns % 10**9 // 10**7)


def _under(files: dict, name: bytes) -> dict:
    """The files whose path's first folder (or own name) is `name`."""
    return {path: text for path, text in files.items() if path.split(b"/")[0] == name}


def _sys_dir(fs: ProcFs) -> SyntheticDir:
    """/proc/sys as a tree of folders from the sysctl table's paths."""
    return _folder(fs, b"/sys", _tree(fs, b"/sys", sysctl_table(fs.sysctl), nodes=False))


def _tree(fs: ProcFs, base: bytes, files: dict, nodes: bool = True) -> dict:
    """Folders (nested dicts, or their nodes) of generated files by their relative paths."""
    tree: dict = {}
    for path, text in sorted(files.items()):
        *folders, name = path.split(b"/")
        branch = tree
        for folder in folders:
            branch = branch.setdefault(folder, {})
        branch[name] = fs.sysctl_file(base + b"/" + path, text) if isinstance(text, Sysctl) \
            else fs.file(base + b"/" + path, text)
    if not nodes:
        return tree
    return {name: _folder(fs, base + b"/" + name, child) if isinstance(child, dict) else child
            for name, child in tree.items()}


def _folder(fs: ProcFs, path: bytes, tree: dict) -> SyntheticDir:
    return fs.dir(path, {name: _folder(fs, path + b"/" + name, child) if isinstance(child, dict)
                         else child for name, child in tree.items()})


def _process_dir(fs: ProcFs, proc: ProcessView, reader: ProcessView) -> SyntheticDir:
    base = b"/%d" % proc.pid
    folder = LazyDir("proc", fs._meta(base, S_IFDIR, 0o555),
                     lambda: _process_entries(fs, proc, reader, base))
    folder.proc_pid = proc.pid      # a /proc/PID folder stands for its process (pidfd_send_signal)
    folder.proc_process = getattr(proc, "process", None)      # and that one only (pid reuse)
    return folder


def _process_entries(fs: ProcFs, proc: ProcessView, reader: ProcessView, base: bytes) -> dict:
    """/proc/PID's entries, each made when looked up (fs/proc/base.c tgid_base_stuff)."""
    makers = {
        b"cwd": lambda: _magic(fs.link(base + b"/cwd", proc.cwd)),
        b"exe": lambda: _magic(fs.link(base + b"/exe", proc.exe_path)),
        b"fd": lambda: fs.dir(base + b"/fd", _fd_links(fs, proc, base), ordered=True),
        b"fdinfo": lambda: fs.dir(base + b"/fdinfo", _fdinfo_files(fs, proc, base), ordered=True),
        b"maps": lambda: fs.file(base + b"/maps", proc.maps_text),
        b"smaps": lambda: fs.file(base + b"/smaps", getattr(proc, "smaps_text", lambda: b"")),
        b"mountinfo": lambda: fs.file(base + b"/mountinfo", lambda: fs.mount_text(proc, True)),
        b"mounts": lambda: fs.file(base + b"/mounts", lambda: fs.mount_text(proc, False)),
        b"root": lambda: _magic(fs.link(base + b"/root", lambda: b"/")),
        b"ns": lambda: fs.dir(base + b"/ns", _namespace_links(fs, proc, base), ordered=True),
        b"stat": lambda: fs.file(base + b"/stat", lambda: stat_line(proc, fs.clocks.cpu_ns())),
        b"status": lambda: fs.file(base + b"/status", lambda: status_text(proc)),
        b"comm": lambda: fs.file(base + b"/comm", lambda: comm_of(proc) + b"\n"),
    }
    if hasattr(proc, "pagemap"):
        makers[b"pagemap"] = lambda: fs.pagemap(base + b"/pagemap", proc.pagemap, proc.user_pages())
    if hasattr(proc, "tasks"):
        makers[b"task"] = lambda: fs.dir(base + b"/task", {
            b"%d" % task.pid: _task_dir(fs, task, base + b"/task/%d" % task.pid)
            for task in proc.tasks()})
    if hasattr(proc, "timens_offsets"):     # fs/proc/base.c timens_offsets_{show,write}
        makers[b"timens_offsets"] = lambda: fs.file(base + b"/timens_offsets", proc.timens_offsets,
                                                    0o644, proc.set_timens_offsets)
    if hasattr(proc, "namespaces"):         # user namespace id maps (proc_idmaps.py)
        for name in IDMAP_NAMES:
            makers[name] = lambda name=name: idmap_files(fs, proc, reader, base)[name]
    if hasattr(proc, "timer_slack_ns"):     # fs/proc/base.c timerslack_ns_show: "%llu\n"
        makers[b"timerslack_ns"] = lambda: fs.file(base + b"/timerslack_ns",
                                                   lambda: b"%d\n" % proc.timer_slack_ns())
    return makers


def _task_dir(fs: ProcFs, task: ProcessView, base: bytes) -> SyntheticDir:
    """/proc/PID/task/TID: the thread's stat, status and comm (fs/proc/base.c tid_base_stuff;
    LTP's futex tests wait for each thread's S, prctl05 reads its comm), and its maps, its
    process's areas (gdb reads the vDSO's extent there: linux-tdep.c linux_vsyscall_range_raw)."""
    return fs.dir(base, {
        b"comm": fs.file(base + b"/comm", lambda: comm_of(task) + b"\n"),
        b"maps": fs.file(base + b"/maps", task.maps_text),
        b"stat": fs.file(base + b"/stat", lambda: stat_line(task, fs.clocks.cpu_ns())),
        b"status": fs.file(base + b"/status", lambda: status_text(task)),
    })


def _fd_links(fs: ProcFs, proc: ProcessView, base: bytes) -> dict[bytes, Node]:
    links = {}
    for fd, target in sorted(proc.fd_targets().items()):
        link = fs.link(base + b"/fd/%d" % fd, lambda target=target: target)
        link.fd = fd        # a magic link: opening it reaches the open file (namei.py)
        links[b"%d" % fd] = _magic(link)
    return links


def _namespace_links(fs: ProcFs, proc: ProcessView, base: bytes) -> dict[bytes, Node]:
    """ns/: a magic link per namespace kind, to the sandbox's one namespace of it (nsfs.py),
    or for the kinds a process may have others of to the process's (namespaces(): its time,
    pid, user, network, mount, UTS and IPC namespaces, and its children's time and pid ones)."""
    namespaces = getattr(proc, "namespaces", dict)
    links = {}
    for name, kind in LINKS:
        def ns(name=name):
            return namespaces().get(name)
        link = fs.link(base + b"/ns/" + name,
                       lambda kind=kind, ns=ns: link_text(kind, getattr(ns(), "inum", None)))
        link.opens = lambda kind=kind, ns=ns: NamespaceFile(kind, ns())
        links[name] = _magic(link)
    return links


def _fdinfo_files(fs: ProcFs, proc: ProcessView, base: bytes) -> dict[bytes, Node]:
    """fdinfo/N for each open fd, readable by the owner only (proc_fdinfo_inode_operations)."""
    return {b"%d" % fd: fs.file(base + b"/fdinfo/%d" % fd, lambda fd=fd: proc.fdinfo(fd), 0o400)
            for fd in sorted(proc.fd_targets())}


def _magic(link: Node) -> Node:
    """A link Linux resolves by jumping to what it names (nd_jump_link), not by its text:
    openat2's RESOLVE_NO_MAGICLINKS refuses it."""
    link.magic = True
    return link
