"""One debugged run: the sandbox (with its probes), the US 6,957,421 debugger attached to the
first process before it runs, and the GDB connection serving its stops."""
import os
import signal
import sys
import time
from dataclasses import dataclass, field

from ..tracing import StreamSink


@dataclass
class DebugRun:
    program: str
    args: list
    probes: list = field(default_factory=list)
    strategy: str = "auto"
    records: object = None             # where probe records are written (text format)
    stdio: bool = True
    address: tuple | None = None       # (host, port) to listen on instead of stdio
    log: object = None                 # callable(str): the packets, for --debug-protocol
    sandbox_options: dict = field(default_factory=dict)
    server: object = None
    detach_probes: bool = False        # GDB's detach detaches the probes too (--detach-probes)

    def run(self):
        from instrumenter.probes.definitions import Probe

        from ..probespec import parse_probe_spec
        from ..sandbox import Sandbox

        specs = [parse_probe_spec(p) for p in self.probes]     # a bad spec: before GDB waits
        connection = self._connect()
        host_stdio = (0, 1, 2)
        if self.stdio:                 # the protocol owns 0 and 1 (gdbserver's rule)
            host_stdio = (os.open(os.devnull, os.O_RDONLY), 2, 2)
        sandbox = Sandbox(capture=False, host_stdio=host_stdio, on_start=self._attach(connection),
                          probes=[Probe(s) for s in specs], strategy=self.strategy,
                          sink=StreamSink(self.records or sys.stderr, "text") if specs else None,
                          **self.sandbox_options)
        try:
            result = sandbox.run([self.program, *self.args])
            if self.server is not None:
                self.server.finish(result.wait_status, self._first)
        finally:
            connection.close()
        return result

    def _connect(self):
        from .connection import Connection
        if self.address is None:
            return Connection.stdio(log=self.log)
        host, port = self.address
        return Connection.accept(host, port, log=self.log, on_listening=lambda p: print(
            f"trapline gdbserver: listening on {host}:{p}", file=sys.stderr, flush=True))

    def _attach(self, connection):
        from instrumenter.debugger.debugger import Debugger

        from .server import GdbServer

        def on_start(kernel, process, session):
            debugger = Debugger(kernel.debug, session)
            self.server = GdbServer(connection, debugger, kernel.debug.arch(process).name,
                                    os.path.abspath(self.program))
            debugger.on_stop = self.server.on_stop
            debugger.wait_for_user = self.server.wait_for_user
            self.server.on_detach = _on_detach(self.stdio, session if self.detach_probes else None)
            connection.on_interrupt = lambda: _interrupt(debugger)
            self._first = process
            debugger.attach(process)
        return on_start


def _on_detach(stdio: bool, session):
    """What GDB's detach (D) does besides the debugger's own: the probes leave at the next safe
    point (`session`, with --detach-probes: the loop reaches one as soon as GDB is answered),
    and with a stdio connection the program outlives gdb."""
    def on_detach(*, whole: bool) -> None:
        if whole and session is not None and session.detacher is None:
            session.detach()
        if stdio:
            _outlive_gdb()
    return on_detach


def _outlive_gdb() -> None:
    """After a detach the program runs on to its end, as a detached inferior outlives
    gdbserver; but gdb ends a `target remote | ...` connection with SIGTERM to the stub
    (gdb/ser-pipe.c pipe_close), which here is the program's process too."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _interrupt(debugger) -> None:
    """Ctrl-C, from the connection's reader thread: ask the running slice to end until the
    debugger has taken the request at a schedule point. Asked again every 20 ms: a request
    that lands between two slices would otherwise wait for the end of the next one, which
    for a lone thread runs until it blocks or exits."""
    debugger.interrupt()
    while debugger.interrupt_requested and not (debugger.detached or debugger.stopped):
        time.sleep(0.02)
        debugger.interrupt()
