"""The modeled kernel: processes, the run loop, and how events from the Machine are handled.

Single-threaded for now: one runnable thread runs until it makes a call that must happen
outside Unicorn's hooks, faults, or exits. (The scheduler of issue 3 plugs in at `_pick`.)
"""
import sys
from dataclasses import dataclass, field

from emu import exits

from . import errno as E
from . import idt as V
from .clock import VirtualClock
from .errno import GuestErrno
from .errors import KernelError
from .exec import build_program
from .fdtable import FdTable
from .fs import FileSystem
from .proc import RUNNABLE, ZOMBIE, Process, Thread
from .signals import name as signal_name
from .syscalls.dispatch import SyscallDispatcher
from .vectors import install_vectors

FIRST_PID = 100          # pids start at a fixed number: no host pid leaks into a run
O_RDONLY = 0


@dataclass
class KernelConfig:
    rootfs: str | None = None
    writable: bool = False
    seed: int = 0
    cwd: bytes = b"/"
    stdin: object = None          # OpenFile objects for fds 0, 1, 2
    stdout: object = None
    stderr: object = None
    strace: object = None         # a tracer (kernel_model.tracer.StraceTracer) or None
    verbose: bool = False
    report: object = None         # where trapline's own messages go (default: host stderr)
    memory_limit: int = 4 << 30
    extra: dict = field(default_factory=dict)


class Kernel:
    def __init__(self, config: KernelConfig):
        self.config = config
        self.clock = VirtualClock()
        self.fs = FileSystem(config.rootfs, writable=config.writable, seed=config.seed,
                             clock=self.clock.realtime_ns)
        self.syscalls = SyscallDispatcher(self)
        self.tracer = config.strace
        self.processes: dict[int, Process] = {}
        self.next_pid = FIRST_PID
        self.exec_count = 0
        self.current: Thread | None = None
        self.in_hook = False
        self.messages: list[str] = []
        self.unimplemented: dict[str, int] = {}
        self._random_offset = 0

    # ---- messages --------------------------------------------------------------------------
    def report(self, text: str) -> None:
        """trapline's own diagnostics: kept in `messages`, and printed on the report stream."""
        self.messages.append(text)
        out = self.config.report or sys.stderr
        out.write(f"trapline: {text}\n")
        out.flush()

    def random_bytes(self, count: int) -> bytes:
        """The next `count` bytes of the run's getrandom stream (from --seed, never the host)."""
        from .syscalls.impls.timecalls import seeded_stream
        data = seeded_stream(self.config.seed, b"getrandom", self._random_offset, count)
        self._random_offset += count
        return data

    def report_unimplemented(self, proc: Process, name: str, nr: int) -> None:
        if name not in self.unimplemented:
            self.unimplemented[name] = nr
            self.report(f"unimplemented syscall {name} (nr {nr}) returns -ENOSYS")

    # ---- process creation ------------------------------------------------------------------
    def spawn(self, path: bytes, argv: list[bytes], envp: list[bytes]) -> Process:
        """Create the first process running `path` (a guest path) with fds 0-2 from the config."""
        fds = FdTable()
        for fd, f in enumerate((self.config.stdin, self.config.stdout, self.config.stderr)):
            if f is not None:
                fds.install(f, at=fd)
        pid = self._allocate_pid()
        proc = Process(pid=pid, ppid=pid - 1, space=None, fds=fds, cwd=self.config.cwd,
                       pgid=pid, sid=pid)
        try:
            program = self.load_program(proc, path, argv, envp)
        except GuestErrno as e:
            raise KernelError(f"cannot run {path.decode(errors='replace')}: "
                              f"{E.NAMES.get(e.errno, e.errno)}{': ' + e.args[0].split(': ', 1)[-1] if ': ' in e.args[0] else ''}") from None
        self.processes[pid] = proc
        self.commit_program(proc, program, argv)
        return proc

    def _allocate_pid(self) -> int:
        pid = self.next_pid
        self.next_pid += 1
        return pid

    def load_program(self, proc: Process, path: bytes, argv, envp):
        """Read and build the program at guest `path` for `proc` (nothing of proc changes)."""
        f = self.fs.open(path, O_RDONLY, 0, proc.cwd, _FsView(proc))
        try:
            st = f.stat()
            if (st.mode & 0o170000) != 0o100000:
                raise GuestErrno(E.EACCES)
            data = b""
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                data += chunk
        finally:
            f.close()
        self.exec_count += 1
        return build_program(data, self.fs.realpath(path, proc.cwd, _FsView(proc)), argv, envp,
                             seed=self.config.seed, exec_count=self.exec_count,
                             memory_limit=self.config.memory_limit)

    def commit_program(self, proc: Process, program, argv) -> Thread:
        """Replace proc's image by `program` (the point of no return of execve)."""
        space = program.space
        install_vectors(self, space)
        space.machine.syscall_handler = self._on_syscall_instruction
        proc.space = space
        proc.image = program.image
        proc.exe = program.exe_path
        proc.argv = list(argv)
        tid = proc.threads[0].tid if proc.threads else proc.pid
        thread = Thread(tid=tid, process=proc, kstack_top=space.kstack_top(0))
        proc.threads = [thread]
        space.enter_user_mode(program.entry, program.sp, kstack_top=thread.kstack_top)
        self.current = thread
        return thread

    # ---- the run loop ----------------------------------------------------------------------
    def run(self, proc: Process) -> int:
        """Run until `proc` exits; return its wait status."""
        while proc.state != ZOMBIE:
            thread = self._pick(proc)
            machine = thread.process.machine
            self.in_hook = True
            try:
                exit_ = machine.run(machine.pc)
            finally:
                self.in_hook = False
            self._handle_exit(thread, exit_)
        return proc.exit_status

    def _pick(self, proc: Process) -> Thread:
        return self.current

    def _handle_exit(self, thread: Thread, exit_: exits.Exit) -> None:
        space = thread.process.space
        if exit_.kind == exits.SYSCALL:
            self._syscall_instruction(thread, exit_.pc, in_hook=False)
        elif exit_.kind == exits.TRAP:
            if thread.process.state == RUNNABLE:
                space.traps.dispatch(exit_.vector, exit_.pc)
        elif exit_.kind == exits.FAULT:
            self._page_fault(thread, exit_)

    def may_continue(self, thread: Thread) -> bool:
        return thread.process.state == RUNNABLE and self.current is thread

    # ---- system calls ----------------------------------------------------------------------
    def int80_handler(self, frame) -> bool:
        return self.syscalls.handle(self.current, "i386", frame, in_hook=self.in_hook)

    def _on_syscall_instruction(self, pc: int) -> bool:
        return self._syscall_instruction(self.current, pc, in_hook=True)

    def _syscall_instruction(self, thread: Thread, pc: int, *, in_hook: bool) -> bool:
        """x86-64 `syscall`: rcx <- return RIP, r11 <- RFLAGS (Intel SDM Vol. 2B, SYSCALL)."""
        m = thread.process.machine
        m.set_reg("rcx", pc)
        m.set_reg("r11", m.reg("rflags"))
        return self.syscalls.handle(thread, "x86_64", None, in_hook=in_hook)

    # ---- faults and death ------------------------------------------------------------------
    def _page_fault(self, thread: Thread, exit_: exits.Exit) -> None:
        # #PF error code (Intel SDM Vol. 3A, 4.7): P=1 protection, W/R=2 write, U/S=4 user, I/D=16 fetch
        code = (0 if exit_.unmapped else 1) | (2 if exit_.access == exits.WRITE else 0) | 4 \
            | (16 if exit_.access == exits.FETCH else 0)
        thread.pending_fault = exit_
        thread.process.space.traps.dispatch(V.PF, exit_.pc, error_code=code,
                                            fault_address=exit_.address)

    def deliver_exception(self, frame, signal: int) -> bool:
        """A CPU exception in user code: the signal's default action (handlers come with issue 3)."""
        thread = self.current
        proc = thread.process
        detail = V.NAMES.get(frame.vector, f"vector {frame.vector}")
        if frame.vector == V.PF:
            fault = getattr(thread, "pending_fault", None)
            what = "not mapped" if fault is None or fault.unmapped else "not permitted"
            access = fault.access if fault is not None else "access"
            detail = f"{access} at {frame.fault_address:#x} ({what})"
        self.kill(proc, signal, f"{detail}, pc={frame.ip:#x} ({self.symbolize(proc, frame.ip)})")
        return False

    def symbolize(self, proc: Process, addr: int) -> str:
        image = getattr(proc, "image", None)
        return image.symbols.symbolize(addr) if image is not None else f"{addr:#x}"

    def kill(self, proc: Process, signal: int, detail: str = "") -> None:
        self.report(f"pid {proc.pid} killed by {signal_name(signal)}" + (f": {detail}" if detail else ""))
        if self.tracer:
            self.tracer.killed(proc, signal)
        self.terminate(proc, signal)

    def exit_process(self, proc: Process, code: int) -> None:
        if self.tracer:
            self.tracer.exited(proc, code)
        self.terminate(proc, (code & 0xFF) << 8)

    def terminate(self, proc: Process, status: int) -> None:
        proc.exit_status = status
        proc.state = ZOMBIE
        proc.fds.close_all()
        if self.in_hook:
            proc.machine.stop()


class _FsView:
    """The file system's view of a process (for /proc/self)."""

    def __init__(self, proc: Process):
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

    @property
    def ppid(self) -> int:
        return self._proc.ppid

    def cwd(self) -> bytes:
        return self._proc.cwd


def fs_view(proc: Process) -> _FsView:
    return _FsView(proc)


def wait_status_exit_code(status: int) -> int:
    """Shell convention: exit code, or 128+N after death by signal N."""
    return 128 + (status & 0x7F) if status & 0x7F else (status >> 8) & 0xFF
