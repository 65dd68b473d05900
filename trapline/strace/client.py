"""strace as a client of the debug interface (kernel_model/debug/), the one door between a
tool and the kernel: it sees what ptrace shows a real strace — syscall entry and exit with the
call's name, ABI and arguments, signal deliveries, forks and exits — and reads the caller's
memory through the door, never the kernel's internals.

Formatting lives in trapline/strace/syscall_line.py; this module decides *when* a line is
printed: at the syscall's exit, or — for calls that do not return to their caller (exit,
exit_group: no exit event; a successful execve: the caller's memory is gone at its exit) — from
what was read at its entry.
"""
from . import syscall_line

NO_RETURN_CALLS = frozenset({"exit", "exit_group"})

SI_CODES = {0: "SI_USER", -6: "SI_TKILL", 0x80: "SI_KERNEL", 1: "CLD_EXITED", 2: "CLD_KILLED",
            3: "CLD_DUMPED"}
ABI_BITS = {"i386": 32, "x86_64": 64}


class _Memory:
    """One traced process's memory as the formatter reads it (strings.MemReader): through the
    door's peeks, None where it is not readable."""
    __slots__ = ("_debug", "_process")

    def __init__(self, debug, process):
        self._debug, self._process = debug, process

    def read(self, addr: int, n: int):
        return self._debug.peek(self._process, addr, n)

    def read_cstr(self, addr: int, limit: int):
        return self._debug.peek_string(self._process, addr, limit)


class StraceClient:
    """Like strace: only the first process unless `follow_forks` (-f); then lines carry a
    `[pid N]` prefix while more than one traced process is alive."""

    def __init__(self, debug, out, *, follow_forks: bool = False):
        self.debug = debug
        self.out = out
        self.follow_forks = follow_forks
        self.root_pid: int | None = None
        self.live: set[int] = set()
        self._execve_lines: dict[int, str] = {}     # tid -> its execve's line, read at entry

    def attach(self) -> "StraceClient":
        """Follow the kernel's processes from now on: its events and every syscall stop."""
        self.debug.subscribe(self)
        self.debug.syscall_watchers.append(self)
        return self

    def _traced(self, proc, tid: int | None) -> bool:
        """Without -f strace follows only the first task (not its threads or children)."""
        if self.root_pid is None:
            self.root_pid = proc.pid
            self.live.add(proc.pid)
        return self.follow_forks or (proc.pid == self.root_pid and tid in (None, self.root_pid))

    def _emit(self, proc, line: str, tid: int | None = None) -> None:
        """strace -f tags lines with the thread id while several tasks are traced."""
        if not self._traced(proc, tid):
            return
        several = len(self.live) > 1 or len(self.debug.threads(proc)) > 1
        prefix = f"[pid {tid or proc.pid}] " if self.follow_forks and several else ""
        self.out.write(prefix + line + "\n")
        self.out.flush()

    def _line(self, thread, name: str, args, result: int) -> str:
        bits = ABI_BITS[self.debug.syscall_abi(thread)]
        return syscall_line.format_syscall(name, args, result,
                                           _Memory(self.debug, thread.process), bits)

    # ---- process events ---------------------------------------------------------------------
    def fork(self, parent, child) -> None:
        if self.follow_forks:
            self.live.add(child.pid)

    def vfork(self, parent, child) -> None:
        self.fork(parent, child)

    def exit(self, proc, status: int) -> None:
        """The wait status word: `exited with N` or `killed by SIG` (wait(2)'s WIFSIGNALED)."""
        signal = status & 0x7F
        self._emit(proc, syscall_line.format_killed(signal) if signal
                   else syscall_line.format_exit((status >> 8) & 0xFF))
        self.live.discard(proc.pid)

    def signal(self, proc, thread, sig: int, info: dict | None = None) -> None:
        """A signal-delivery line, as strace prints it for a handled, an ignored or a fatal
        signal (`thread` None: it kills; a death with no delivered siginfo has no line)."""
        if info is None:
            return
        name = syscall_line.signal_name(sig)
        code = info.get("code", 0)
        fields = [f"si_signo={name}", f"si_code={SI_CODES.get(code, code)}"]
        if "addr" in info:
            fields.append(f"si_addr={info['addr']:#x}")
        else:
            fields += [f"si_pid={info.get('pid', 0)}", "si_uid=0"]
            if "status" in info:
                status = info["status"]         # CLD_KILLED/CLD_DUMPED: the signal, by name
                fields.append(f"si_status={syscall_line.signal_name(status) if code in (2, 3) else status}")
        self._emit(proc, f"--- {name} {{{', '.join(fields)}}} ---")

    signal_ignored = signal

    # ---- syscall stops ----------------------------------------------------------------------
    def syscall_entry(self, thread, name: str, args) -> None:
        """What must be read from the caller's memory before the call runs."""
        if name in NO_RETURN_CALLS:
            self._emit(thread.process, self._line(thread, name, args, 0), thread.tid)
        elif name == "execve":
            self._execve_lines[thread.tid] = self._line(thread, name, args, 0)

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        entry_line = self._execve_lines.pop(thread.tid, None) if name == "execve" else None
        if entry_line is not None and result == 0:
            self._emit(thread.process, entry_line, thread.tid)   # the new image's memory now
            return
        self._emit(thread.process, self._line(thread, name, args, result), thread.tid)
