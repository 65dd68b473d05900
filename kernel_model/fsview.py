"""The file system's view of a process (what /proc/self shows), kept apart from the kernel."""


class FsView:
    """The file system's view of a process (for /proc/self)."""

    def __init__(self, proc):
        self._proc = proc
        self.pid = proc.pid

    def exe_path(self) -> bytes:
        return self._proc.exe

    def maps_text(self) -> bytes:
        return self._proc.maps_text() if self._proc.space else b""

    def fd_targets(self) -> dict[int, bytes]:
        return self._proc.fd_targets()

    def fd_file(self, fd: int):
        """The open file behind /proc/self/fd/N (what /dev/stdout reopens)."""
        entry = self._proc.fds.entries.get(fd)
        return entry.file if entry else None

    def cwd(self) -> bytes:
        return self._proc.cwd

    @property
    def ppid(self) -> int:
        return self._proc.ppid


def fs_view(proc) -> FsView:
    return FsView(proc)
