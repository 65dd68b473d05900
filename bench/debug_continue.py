"""fib(n) with a debugger attached and continued at once (GDB's `continue`) vs without one.

What a debugged run pays besides its stops: the run controller's schedule points and the
Ctrl-C's block hook on every block (emu/block_stop.py: a stop asked from GDB's connection
thread lands at a block's start, never inside a read-modify-write instruction). The debugger is
the one `trapline gdbserver` drives (instrumenter/debugger/), in this process, without the GDB
connection: its initial stop resumes, and nothing else stops the run. CPU time of this process,
best of 3, both arches; the ratio is the debugged run's over the plain one's.
"""
import time

from instrumenter.debugger.debugger import Debugger
from trapline import Sandbox

from .common import SAMPLES, best_of


def continued(arch: str, n: int, *, debugged: bool):
    """A callable that runs fib n, under a debugger that only resumes when `debugged`; it
    returns (the program's stdout, the stops the debugger reported)."""
    def run():
        stops = []

        def attach(kernel, process, session):
            def on_stop(event):
                stops.append(event.kind)
                debugger.resume()
            debugger = Debugger(kernel.debug, session, on_stop=on_stop)
            debugger.attach(process)
        sandbox = Sandbox(on_start=attach) if debugged else Sandbox()
        result = sandbox.run([str(SAMPLES / arch / "fib"), str(n)])
        assert result.exit_code == 0, result
        return result.stdout, stops
    return run


def run(n: int = 32) -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        t_plain, (plain, _) = best_of(continued(arch, n, debugged=False), clock=time.process_time)
        t_debug, (out, stops) = best_of(continued(arch, n, debugged=True), clock=time.process_time)
        assert out == plain and stops[0] == "initial", (out, plain, stops)
        lines.append(f"fib({n}) {arch:6}: plain {t_plain * 1e3:7.1f} ms, debugger attached and "
                     f"continued {t_debug * 1e3:7.1f} ms -> {t_debug / t_plain:.2f}x")
    return lines
