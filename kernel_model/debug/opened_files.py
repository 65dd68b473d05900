"""The files a run's guests opened (part of the debug interface, kernel_model/debug/), for a tool
that records what a result depends on (trapline experiment's manifest lists the sha256 of every
file of the guest's root that it opened), as strace -e trace=%file -y would show them.

Once a tool asks (`watch_opened_files`), every successful open, openat, openat2, creat and
open_by_handle_at adds the file its new descriptor refers to, by its global path (the model
keeps paths global, kernel_model/fsview.py: the path in the tree the sandbox runs in, whatever
the process's root). It watches the system calls as strace does, from the outside: the calls
run as they would without it (the dispatcher hands watchers the same decoded call), so the
guest's instructions and results are the same.
"""

# Linux's calls that return a new descriptor for a path (fs/open.c, fs/fhandle.c)
OPENING_CALLS = frozenset({"open", "openat", "openat2", "creat", "open_by_handle_at"})


class OpenedFiles:
    def __init__(self, events):
        self._events = events
        self._paths: set[bytes] | None = None        # None: nobody asked

    def watch_opened_files(self) -> None:
        """From now on, note the file of every descriptor an open call returns."""
        if self._paths is None:
            self._paths = set()
            self._events.add_syscall_watcher(_OpenWatcher(self._paths))

    def opened_files(self) -> list[bytes]:
        """The global paths opened since `watch_opened_files`, sorted (bytes order)."""
        return sorted(self._paths or ())


class _OpenWatcher:
    """A syscall watcher (kernel_model/debug/events.py) that notes what the opens returned."""

    def __init__(self, paths: set[bytes]):
        self._paths = paths

    def syscall_entry(self, thread, name: str, args) -> None:
        pass

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        if name in OPENING_CALLS and result >= 0:
            entry = thread.process.fds.entries.get(result)
            path = getattr(entry.file, "path", None) if entry is not None else None
            if isinstance(path, bytes) and path.startswith(b"/"):
                self._paths.add(path)
