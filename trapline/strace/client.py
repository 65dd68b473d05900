"""strace-style tracing of system calls (`trapline run --strace`).

Formatting lives in trapline/strace/syscall_line.py; this module decides *when* a line is printed:
after the call returns, or — for calls that do not return to their caller (exit, execve) —
from what was captured before the call.
"""
from emu.memory import MemoryAccessError

from . import syscall_line as strace

NO_RETURN_CALLS = frozenset({"exit", "exit_group"})


class _MemReader:
    def __init__(self, mem):
        self._mem = mem

    def read(self, addr: int, n: int):
        try:
            return self._mem.read(addr, n)
        except MemoryAccessError:
            return None

    def read_cstr(self, addr: int, limit: int):
        try:
            return self._mem.read_cstr(addr, limit)
        except MemoryAccessError:
            return None


SI_CODES = {0: "SI_USER", -6: "SI_TKILL", 0x80: "SI_KERNEL", 1: "CLD_EXITED", 2: "CLD_KILLED",
            3: "CLD_DUMPED"}


class StraceTracer:
    """Like strace: only the first process unless `follow_forks` (-f); then lines carry a
    `[pid N]` prefix while more than one traced process is alive."""

    def __init__(self, out, *, follow_forks: bool = False):
        self.out = out
        self.follow_forks = follow_forks
        self.root_pid: int | None = None
        self.live: set[int] = set()

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
        several = len(self.live) > 1 or len(proc.threads) > 1
        prefix = f"[pid {tid or proc.pid}] " if self.follow_forks and several else ""
        self.out.write(prefix + line + "\n")
        self.out.flush()

    # ---- debug-interface events -------------------------------------------------------------
    def fork(self, parent, child) -> None:
        if self.follow_forks:
            self.live.add(child.pid)

    def vfork(self, parent, child) -> None:
        self.fork(parent, child)

    def exit(self, proc, status: int) -> None:
        self.live.discard(proc.pid)

    def signal(self, proc, thread, sig: int, info: dict | None = None) -> None:
        if info is None or thread is None:
            return
        name = strace.signal_name(sig)
        fields = [f"si_signo={name}", f"si_code={SI_CODES.get(info.get('code', 0), info.get('code', 0))}"]
        if "addr" in info:
            fields.append(f"si_addr={info['addr']:#x}")
        else:
            fields += [f"si_pid={info.get('pid', 0)}", "si_uid=0"]
            if "status" in info:
                fields.append(f"si_status={info['status']}")
        self._emit(proc, f"--- {name} {{{', '.join(fields)}}} ---")

    def before(self, ctx, name, args):
        """Capture what must be formatted from the caller's memory before the call runs."""
        if name in NO_RETURN_CALLS:
            self._emit(ctx.proc, strace.format_syscall(name, args, 0, _MemReader(ctx.mem),
                                                       8 * ctx.word), ctx.thread.tid)
            return "printed"
        if name == "execve":
            return strace.format_syscall(name, args, 0, _MemReader(ctx.mem), 8 * ctx.word)
        return None

    def after(self, ctx, name, args, result, pre):
        if pre == "printed":
            return
        if name == "execve" and not isinstance(result, int):
            self._emit(ctx.proc, pre, ctx.thread.tid)     # success: the caller's memory is gone
            return
        machine = ctx.proc.machine
        if not isinstance(result, int):        # rt_sigreturn: strace shows the restored eax/rax
            result = machine.reg("eax" if machine.arch.bits == 32 else "rax")
        self._emit(ctx.proc, strace.format_syscall(name, args, result, _MemReader(machine.mem),
                                                   8 * ctx.word), ctx.thread.tid)

    def exec_committed(self, ctx, path, argv, envp):
        pass

    def exited(self, proc, code: int) -> None:
        self._emit(proc, strace.format_exit(code))

    def killed(self, proc, signal: int) -> None:
        self._emit(proc, strace.format_killed(signal))
