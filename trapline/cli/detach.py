"""`trapline trace --detach-after N` and `--detach-on SIGNAL`: leave the program at a moment
and let it run on bare (US 7,017,153; instrumenter/tracing/detach.py).

--detach-after N   once N guest instructions have run (the records' clock): the records stop
                   there (the last has ts <= N) and the program runs to its end unprobed;
--detach-on SIG    when SIG is delivered to a traced process (strace's names: SIGUSR2, USR2,
                   or a number): the detach happens at the next safe point, and the signal
                   takes its usual course (the program's handler, or its default action).
With -v the detach is told on stderr: when, how many PCs were moved and return addresses
rewritten, how many patched sites restored and tool pages unmapped. A later jump through a
pointer the program kept into the unmapped tool pages is translated to its original address
and told on stderr too (always: it is a program behaviour worth knowing).
"""
import click

from ..errors import UsageError


def detach_options(f):
    f = click.option("--detach-on", "detach_on", default=None, metavar="SIGNAL",
                     help="Detach every probe when SIGNAL is delivered to a traced process.")(f)
    return click.option("--detach-after", "detach_after", type=click.IntRange(min=1), default=None,
                        metavar="N", help="Detach every probe once N guest instructions have "
                        "run; the program runs on unprobed.")(f)


def detach_starter(detach_after: int | None, detach_on: str | None, verbose: bool):
    """The Sandbox's on_start for these options (None when neither is given)."""
    if detach_after is None and detach_on is None:
        return None
    signal = _signal_number(detach_on) if detach_on is not None else None

    def start(kernel, process, session):
        if session is None:
            raise UsageError("--detach-after/--detach-on need probes (-p)")
        trigger = _Trigger(kernel, session, verbose)
        if detach_after is not None:
            kernel.debug.at_instruction(detach_after, trigger.now)
        if signal is not None:
            kernel.debug.subscribe(_OnSignal(trigger, signal), events=("signal",))
    return start


class _Trigger:
    def __init__(self, kernel, session, verbose: bool):
        self.kernel, self.session, self.verbose = kernel, session, verbose
        self.report = None

    def now(self) -> None:
        """At a safe point (an instruction alarm): detach now."""
        self._detach(at_once=True)

    def soon(self) -> None:
        """Inside an event: at the next safe point."""
        self._detach(at_once=False)

    def _detach(self, *, at_once: bool) -> None:
        if self.report is not None:
            return
        self.report = self.session.detach(at_once=at_once, on_done=self._done)
        self.report.on_stale = self._stale

    def _done(self, report) -> None:
        if self.verbose:
            click.echo(f"trapline: detached at {report.done_at} (asked at {report.requested_at}): "
                       f"{len(report.moved)} PCs moved, {len(report.rewritten)} return addresses "
                       f"rewritten, {len(report.restored)} patched sites restored, "
                       f"{len(report.unmapped)} tool areas unmapped", err=True)

    def _stale(self, pid: int, tool: int, original: int) -> None:
        debug = self.kernel.debug
        process = next((p for p in debug.live_processes() if p.pid == pid), None)
        name = debug.symbolize(process, original) if process is not None else f"{original:#x}"
        click.echo(f"trapline: pid {pid} jumped to {tool:#x} in the detached tool's pages: "
                   f"sent to {original:#x} ({name})", err=True)


class _OnSignal:
    def __init__(self, trigger: _Trigger, signal: int):
        self.trigger, self.wanted = trigger, signal

    def signal(self, process, thread, signal, info) -> None:
        if signal == self.wanted and self.trigger.session.monitor.is_traced(process):
            self.trigger.soon()

    signal_ignored = signal         # an ignored signal is taken all the same


def _signal_number(name: str) -> int:
    from kernel_model.signals import SIGNAL_NAMES
    if name.isdigit() and int(name) in SIGNAL_NAMES:
        return int(name)
    by_name = {n: k for k, n in SIGNAL_NAMES.items()}
    upper = name.upper()
    number = by_name.get(upper) or by_name.get("SIG" + upper)
    if number is None:
        raise UsageError(f"--detach-on {name}: no such signal (SIGUSR2, USR2, or 1..64)")
    return number
