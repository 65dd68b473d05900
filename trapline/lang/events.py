"""proc:fork|vfork|exec|exit and signal:NAME attach points (the door's process events, as
instrumenter/tracing/event_probes.py records them), and interval:/profile: probes on the run's
instruction clock (the door's instruction alarms: kernel_model/debug/alarms.py).

In a proc: or signal: block, arg0 is the event's number: the child's pid (fork, vfork), the
exit code or killing signal (exit), the signal (signal:).

Timed probes fire every N nanoseconds of virtual time, where the guest's instructions are its
time (one nanosecond each, kernel_model/debug/timer.py): a guest asleep runs no instructions,
so a sleep does not advance them. They fire in whichever thread is running then.
"""
from .hit import Hit
from ..probespec import parse_probe_spec


class ProcessEvents:
    """A subscriber of the door's events for the proc: and signal: blocks."""

    def __init__(self, debug):
        self.debug = debug
        self.wanted: list[tuple] = []        # (spec, consumer, block, text)

    def want(self, attach, consumer, block) -> None:
        self.wanted.append((parse_probe_spec(attach.text), consumer, block, attach.text))

    def _fire(self, process, kind: str, match, number: int) -> None:
        current = self.debug.current_thread()
        threads = self.debug.threads(process)
        thread = current if current is not None and current.process is process else \
            (threads[0] if threads else None)
        for spec, consumer, block, text in self.wanted:
            if spec.kind == kind and match(spec):
                consumer.fire(block, Hit(self.debug, thread, 0, text, text.partition(":")[2],
                                         syscall_args=(number,)))

    def fork(self, parent, child) -> None:
        self._fire(parent, "proc", lambda spec: spec.event == "fork", child.pid)

    def vfork(self, parent, child) -> None:
        self._fire(parent, "proc", lambda spec: spec.event == "vfork", child.pid)

    def exec(self, process, path, argv) -> None:
        self._fire(process, "proc", lambda spec: spec.event == "exec", 0)

    def exit(self, process, status: int) -> None:
        number = status & 0x7f or (status >> 8 & 0xff)
        self._fire(process, "proc", lambda spec: spec.event == "exit", number)

    def signal(self, process, thread, signal: int, info=None) -> None:
        self._fire(process, "signal", lambda spec: spec.signal == signal, signal)


class TimedProbes:
    """interval: and profile: blocks, each re-armed on the instruction alarms after it fires."""

    def __init__(self, debug):
        self.debug = debug

    def want(self, attach, consumer, block) -> None:
        debug, period = self.debug, attach.period_ns

        def fire():
            if consumer.finished:
                return
            consumer.fire(block, Hit(debug, debug.current_thread(), 0, attach.text, ""))
            debug.at_instruction(debug.instruction_count() + period, fire)
        debug.at_instruction(debug.instruction_count() + period, fire)
