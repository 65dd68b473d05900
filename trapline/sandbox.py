"""`Sandbox`: run a guest program in the modeled kernel, for library users and the CLI.

A run without probes never imports the instrumenter (capstone, keystone and the strategies),
nor the strace printer without --strace: those imports happen in run() when they are needed.
"""
import os
import sys
from dataclasses import dataclass, field

from emu.host_stop import StopRequested
from kernel_model.errors import KernelError
from kernel_model.fs import CapturedOutput, StdioFile
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code
from kernel_model.process.sched import DEFAULT_QUANTUM

from .errors import UsageError
from .host_output import closed_at_start, guarded

# What a guest gets without --clear-env: small, fixed, never the host's environment.
DEFAULT_ENV = (("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"), ("HOME", "/root"),
               ("TERM", "dumb"), ("LANG", "C"), ("USER", "root"), ("LOGNAME", "root"),
               ("SHELL", "/bin/sh"), ("PWD", "/"))


@dataclass
class RunResult:
    """How a run ended, what it printed when captured, and what its probes recorded."""
    exit_code: int            # shell convention: 128+N after death by signal N
    wait_status: int          # the raw wait status word
    stdout: bytes | None      # captured output (None when passed through)
    stderr: bytes | None
    messages: list[str] = field(default_factory=list)
    unimplemented: dict[str, int] = field(default_factory=dict)
    records: list = field(default_factory=list)       # probe records (when not streamed)
    hits: dict[str, int] = field(default_factory=dict)
    dropped: dict[int, int] = field(default_factory=dict)
    monitor: list[str] = field(default_factory=list)  # the process monitor's reports, in order
    # uprobes that no strategy ever placed, one line each with the reason (tracing/unattached.py)
    unattached: list[str] = field(default_factory=list)
    interrupted: int | None = None  # the host signal that ended the run (emu/host_stop.py)
    # guest instructions as --max-insns charges them: all of them under a budget, else only
    # the slices run while several threads could (kernel_model/kernel.py, Kernel.run)
    insns_charged: int = 0


@dataclass
class Sandbox:
    """A guest run's settings; run(argv) starts the program and returns its RunResult."""
    rootfs: str | None = None
    cwd: str | None = None                 # None: "/" with a rootfs, the host's cwd without one
    env: dict[str, str] | None = None      # None: the default environment
    clear_env: bool = False
    seed: int = 0
    writable: bool = False
    strace: bool = False
    verbose: bool = False
    capture: bool = True                   # capture stdout/stderr instead of passing through
    stdin: bytes | None = None
    follow_forks: bool = False             # strace -f: trace every process, [pid N] prefixes
    strace_options: object = None          # trapline.strace.options.StraceOptions (-o, -e, -s...)
    quantum: int = DEFAULT_QUANTUM         # instructions per slice while several threads can run
    exact_quantum: bool = False            # a slice ends at its quantum's very instruction
    max_insns: int = 0                     # instruction budget; 0: none
    probes: list = field(default_factory=list)   # trace(): specs (str) or instrumenter Probes
    strategy: str = "auto"                 # jump | trampoline | auto
    on_choice: object = None               # callable(probe, address, strategy) for auto's choices
    sink: object = None                    # callable(list[Record]) to stream records; None: collect
    children: str = "follow"               # follow | detach | naive (instrumenter/children/policies.py)
    backpatch: str = "lazy"                # detach's vfork children: lazy | eager
    tools: list = field(default_factory=list)    # callables(kernel, process) attaching a tool
                                                 # (the profiler) before the program runs
    host_stdio: tuple = (0, 1, 2)          # host fds the guest's 0-1-2 pass through to (capture=False)
    on_start: object = None                # callable(kernel, process, session) before the run (a debugger)

    def guest_cwd(self) -> str:
        """Without a rootfs the guest sees the host's tree, so it starts where the user is
        (as under strace or gdb); with a rootfs it starts at its root unless told otherwise."""
        if self.cwd is not None:        # relative: to the host's cwd as the program path is
            return os.path.abspath(self.cwd) if self.rootfs is None else self.cwd
        return "/" if self.rootfs is not None else os.getcwd()

    def environment(self) -> list[bytes]:
        base = {} if self.clear_env else dict(DEFAULT_ENV)
        if not self.clear_env:
            base["PWD"] = self.guest_cwd()
        base.update(self.env or {})
        return [f"{k}={v}".encode() for k, v in base.items()]

    def _flush_sink(self) -> None:
        """Write what the sink keeps for one write (trapline/tracing.py StreamSink.batch)."""
        flush = getattr(self.sink, "flush", None)
        if flush is not None:
            flush()

    def _program_path(self, program: str) -> bytes:
        """With a rootfs the program is a guest path; without one, a host path (host / is the root).
        A name without a slash is neither: the kernel looks it up in the guest's PATH (spawn's
        search, as execvp)."""
        if self.rootfs is None and "/" in program:
            return os.path.abspath(program).encode()
        return program.encode()

    def _check_children_options(self) -> None:
        """--children/--backpatch name policies of the instrumenter; without probes and with the
        defaults there is nothing to check, and nothing of the instrumenter to import."""
        if not self.probes and (self.children, self.backpatch) == (Sandbox.children, Sandbox.backpatch):
            return
        from instrumenter.children.policies import BACKPATCH_MODES, POLICIES
        if self.children not in POLICIES:
            raise UsageError(f"--children {self.children}: expected one of {', '.join(POLICIES)}")
        if self.backpatch not in BACKPATCH_MODES:
            raise UsageError(f"--backpatch {self.backpatch}: expected one of {', '.join(BACKPATCH_MODES)}")

    def run(self, argv: list[str]) -> RunResult:
        if not argv:
            raise UsageError("no program given")
        if self.rootfs is not None and not os.path.isdir(self.rootfs):
            raise UsageError(f"--rootfs {self.rootfs}: not a directory")
        if self.capture:
            stdin = CapturedOutput(self.stdin or b"", name=b"pipe:[0]")
            stdout, stderr = CapturedOutput(name=b"pipe:[1]"), CapturedOutput(name=b"pipe:[2]")
        else:
            closed = closed_at_start()        # `2>&-`: the guest has no fd 2 either
            stdin, stdout, stderr = (None if fd in closed else StdioFile(fd) for fd in self.host_stdio)
        report = guarded(sys.stderr)          # strace lines, messages: a reader gone stops the run
        if self.quantum <= 0:
            raise UsageError("--quantum must be a positive number of instructions")
        self._check_children_options()
        config = KernelConfig(rootfs=self.rootfs, writable=self.writable, seed=self.seed,
                              cwd=self.guest_cwd().encode(), stdin=stdin, stdout=stdout, stderr=stderr,
                              verbose=self.verbose, report=report,
                              quantum=self.quantum, exact_quantum=self.exact_quantum,
                              max_insns=self.max_insns)
        kernel = Kernel(config)
        strace = None
        if self.strace:
            from trapline.strace.client import StraceClient
            strace = StraceClient(kernel.debug, report, follow_forks=self.follow_forks,
                                  options=self.strace_options).attach()
        environment = self.environment()
        program_path = self._program_path(argv[0])
        proc = kernel.spawn(program_path, [a.encode() for a in argv], environment, search=True)
        if strace is not None:            # strace prints the execve it starts the program with:
            # the path as typed (strace execs that, relative to its cwd), or PATH's find
            shown = argv[0].encode() if "/" in argv[0] else kernel.debug.executable_path(proc)
            strace.started(proc, shown, [a.encode() for a in argv], environment)
        collected: list = []
        session = None
        if self.probes:
            from instrumenter.probes.definitions import Probe
            from instrumenter.probes.records import Buffers
            from instrumenter.tracing.session import Session
            from instrumenter.tracing.unattached import never_attached

            from .probespec import parse_probe_spec

            probes = [p if isinstance(p, Probe) else Probe(parse_probe_spec(p)) for p in self.probes]
            buffers = Buffers(capacity=1 if self.sink else 1 << 20, drain=self.sink or collected.extend)
            session = Session(kernel, probes, buffers=buffers, strategy=self.strategy,
                              on_choice=self.on_choice, children=self.children,
                              backpatch=self.backpatch)
            session.attach(proc)
        for attach in self.tools:
            attach(kernel, proc)
        if self.on_start is not None:
            self.on_start(kernel, proc, session)
        try:
            status, interrupted = kernel.run(proc), None
        except StopRequested as stop:
            # Ended by the host (Ctrl-C, SIGTERM, an output gone): what was recorded is still
            # written, and the program counts as killed by that signal, as strace kills the
            # child it started with the signal that ended it (strace.c, cleanup()).
            status = interrupted = stop.signal
        except BaseException:
            self._flush_sink()               # what a batching sink holds of the records so far
            raise
        if session is not None:
            session.flush()
        if strace is not None:
            strace.finish()
        self._flush_sink()
        return RunResult(exit_code=wait_status_exit_code(status), wait_status=status,
                         interrupted=interrupted,
                         stdout=stdout.data if self.capture else None,
                         stderr=stderr.data if self.capture else None,
                         messages=kernel.messages, unimplemented=dict(kernel.unimplemented),
                         records=collected,
                         hits={p.spec.text: p.hits for p in session.probes} if session else {},
                         dropped=session.buffers.dropped() if session else {},
                         monitor=list(session.monitor.reports) if session else [],
                         unattached=never_attached(session) if session else [],
                         insns_charged=kernel.insns_used)


__all__ = ["Sandbox", "RunResult", "KernelError"]
