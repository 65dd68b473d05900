"""strace-style tracing of system calls (`trapline run --strace`).

Formatting lives in kernel_model/strace.py; this module decides *when* a line is printed:
after the call returns, or — for calls that do not return to their caller (exit, execve) —
from what was captured before the call.
"""
from emu.memory import MemoryAccessError

from . import strace

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


class StraceTracer:
    def __init__(self, out, *, follow_forks: bool = False):
        self.out = out
        self.follow_forks = follow_forks

    def _emit(self, proc, line: str) -> None:
        prefix = f"[pid {proc.pid}] " if self.follow_forks else ""
        self.out.write(prefix + line + "\n")
        self.out.flush()

    def before(self, ctx, name, args):
        """Capture what must be formatted from the caller's memory before the call runs."""
        if name in NO_RETURN_CALLS:
            self._emit(ctx.proc, strace.format_syscall(name, args, 0, _MemReader(ctx.mem),
                                                       8 * ctx.word))
            return "printed"
        if name == "execve":
            return strace.format_syscall(name, args, 0, _MemReader(ctx.mem), 8 * ctx.word)
        return None

    def after(self, ctx, name, args, result, pre):
        if pre == "printed":
            return
        if name == "execve" and not isinstance(result, int):
            self._emit(ctx.proc, pre)          # success: the caller's memory is gone
            return
        mem = _MemReader(ctx.proc.machine.mem)
        self._emit(ctx.proc, strace.format_syscall(name, args, result, mem, 8 * ctx.word))

    def exec_committed(self, ctx, path, argv, envp):
        pass

    def exited(self, proc, code: int) -> None:
        self._emit(proc, strace.format_exit(code))

    def killed(self, proc, signal: int) -> None:
        self._emit(proc, strace.format_killed(signal))
