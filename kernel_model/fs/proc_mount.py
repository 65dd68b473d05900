"""The /proc mount of the file system: made on the first lookup under /proc, and until then
the entries the kernel registers (sysctls, files, the process list) wait here. procfs.py and
procsys.py are imported with the mount: a static hello never looks under /proc, and their
modules were a measurable share of its start (bench/startup.py)."""
import functools
from typing import Callable

from .proc_clocks import ProcClocks


class ProcMount:
    """Mixed into FileSystem, whose __init__ sets _sysctl, _proc_files, _processes and _clocks."""

    def add_sysctl(self, path: bytes, text: Callable[[], bytes],
                   write: Callable[[int, bytes], int] | None = None,
                   mode: int | None = None) -> None:
        """A /proc/sys entry whose value follows the kernel's state (procsys.py); `write`
        makes it writable by root (sysctl_write.py)."""
        if "_procfs" in self.__dict__:
            from .procsys import Sysctl
            self._procfs.sysctl[path] = Sysctl(text, write, mode)
        else:
            self._sysctl[path] = (text, write, mode)

    @functools.cached_property
    def tunables(self):
        """The /proc/sys values of the file system's own (procsys.py Tunables)."""
        from .procsys import Tunables
        return Tunables()

    def process_reaped(self, pid: int) -> None:
        """`pid` is free again: its /proc entries' inode numbers go (procfs.py)."""
        if "_procfs" in self.__dict__:
            self._procfs.forget_process(pid)

    def add_proc_file(self, path: bytes, text: Callable[[], bytes]) -> None:
        """A /proc file (path relative to /proc) whose text the kernel generates."""
        self._proc_files[path] = text

    def list_processes(self, processes: Callable[[], dict]) -> None:
        """What /proc/PID shows for other processes than the caller: pid -> ProcessView."""
        self._processes = processes
        if "_procfs" in self.__dict__:
            self._procfs.processes = processes

    def account_time(self, cpu_ns: Callable[[], int], boot_ns: Callable[[], int],
                     idle_ns: Callable[[], int]) -> None:
        """The processes' CPU clock (the one CLOCK_PROCESS_CPUTIME_ID reads), which
        /proc/PID/stat shows as utime, and the time since boot and the idle time, /proc/uptime's."""
        self._clocks = ProcClocks(cpu_ns, boot_ns, idle_ns)
        if "_procfs" in self.__dict__:
            self._procfs.clocks = self._clocks

    @functools.cached_property
    def _procfs(self):
        """The /proc mount, made when a path first goes through it."""
        from .procfs import ProcFs
        from .procsys import Sysctl
        procfs = ProcFs()
        procfs.sysctl.update(self.tunables.sysctls())
        procfs.sysctl.update({path: Sysctl(*entry) for path, entry in self._sysctl.items()})
        procfs.files, procfs.processes = self._proc_files, self._processes
        procfs.mount_text = lambda proc, info: _mount_points().mount_text(self, proc, info)
        if self._clocks is not None:
            procfs.clocks = self._clocks
        return procfs


def _mount_points():
    from . import mount_points              # the mounts' module, when /proc first shows them
    return mount_points
