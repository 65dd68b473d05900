"""The first process of a run: its fds from the config, its starting directory, its program
loaded (binprm.py) and committed (exec.py), as a launcher's fork + chdir + execve; and the
pids every new process and thread gets (alloc_pid).

Kept apart from kernel.py, which mixes it into Kernel, because starting a run is one concept
and the run loop another; `Kernel.spawn` and `Kernel.load_program` stay the entry points their
callers use.
"""
from .. import errno as E
from .binprm import load_program
from ..errno import GuestErrno
from ..errors import ExecFailed, KernelError
from ..fdtable import FdTable
from ..fsview import fs_view
from ..path_search import load_from_path, needs_search, search_path
from .exec import commit_program
from .proc import INIT_PID, Process


class Spawning:
    def allocate_pid(self) -> int:
        pid = self.peek_next_pid()
        self.next_pid = pid + 1
        return pid

    def peek_next_pid(self) -> int:
        """alloc_pid (idr_alloc_cyclic): the first pid after the last handed out that no task
        holds; kernel.ns_last_pid may have moved it back (proc_entries.py)."""
        taken = {t.tid for p in self.processes.values() for t in p.threads} | set(self.processes)
        pid = self.next_pid
        while pid in taken or pid == INIT_PID:
            pid += 1
        return pid

    def spawn(self, path: bytes, argv: list[bytes], envp: list[bytes], *,
              search: bool = False) -> Process:
        """Create the first process running `path` (a guest path) with fds 0-2 from the config.
        With `search`, a name without a slash is looked up in envp's PATH, as execvp does
        (kernel_model/path_search.py); argv stays as given."""
        fds = FdTable()
        fds.locks = self.locks            # the record locks this table's process will own
        for fd, f in enumerate((self.config.stdin, self.config.stdout, self.config.stderr)):
            if f is not None:
                fds.install(f, at=fd)
        pid = self.allocate_pid()
        proc = Process(pid=pid, ppid=INIT_PID, space=None, fds=fds, cwd=self.config.cwd,
                       pgid=pid, sid=pid, start_ns=self.clock.monotonic_ns())
        proc.cwd = self._starting_directory(proc)
        try:
            if search and needs_search(path):
                path, program = load_from_path(lambda candidate: self.load_program(
                    proc, candidate, argv, envp), path, search_path(envp))
            else:
                program = self.load_program(proc, path, argv, envp)
        except GuestErrno as e:
            reason = E.NAMES.get(e.errno, str(e.errno))
            detail = str(e).split(": ", 1)[1] if ": " in str(e) else ""
            raise ExecFailed(f"cannot run {path.decode(errors='replace')}: {reason}"
                             + (f" ({detail})" if detail else ""), e.errno) from None
        self.processes[pid] = proc
        self.processes_created += 1
        thread = commit_program(self, proc, program, program.argv)
        self.scheduler.add(thread)
        return proc

    def _starting_directory(self, proc: Process) -> bytes:
        """The configured cwd as a launcher's chdir(2) before the exec finds it (env -C,
        fs/open.c): a directory of the guest's view, or the start fails with why."""
        try:
            return self.fs.directory(self.config.cwd, b"/", fs_view(proc))
        except GuestErrno as e:
            raise KernelError(f"cannot change directory to {self.config.cwd.decode(errors='replace')}: "
                              f"{E.NAMES[e.errno]} ({E.ERRNOS[e.errno][1]})") from None

    def load_program(self, proc: Process, path: bytes, argv, envp):
        """Read and build the program at guest `path` for `proc` (nothing of proc changes):
        binprm.py, `#!` scripts included; kernel_model/process/exec.py commits it."""
        return load_program(self, proc, path, argv, envp)
