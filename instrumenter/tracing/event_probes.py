"""proc:fork, proc:vfork, proc:exec, proc:exit and signal:NAME probes: records made from the
debug interface's process events (kernel_model/debug/), as bpftrace's tracepoints
sched:sched_process_fork/exec/exit and signal:signal_deliver give them.

A record carries the process the event is about (the parent for fork/vfork), the thread that
raised it, the virtual time (the run's instruction clock, exact: kernel_model/debug/alarms.py)
and the event's own fields, in a fixed order:
  fork, vfork   child_pid
  exec          path, argv
  exit          code (exited) or signal (killed), core (1 when it dumped core)
  signal:NAME   signal, action ("handler": a handler frame was built; "ignored": SIG_IGN or
                ignored by default; "killed": its default action ended the process), code
                (si_code, for a handler or an ignored signal)
Only processes the session traces produce records (the children policy decides about
children: instrumenter/children/policies.py).
"""
from kernel_model.debug import DebugInterface

from ..probes.definitions import PROC, SIGNAL

signal_name = DebugInterface.signal_name


class EventProbes:
    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        self.debug.subscribe(self)

    def _probes(self, kind: str, match) -> list:
        return [p for p in self.session.probes
                if p.enabled and p.spec.kind == kind and match(p.spec)]

    def _record(self, probe, process, thread, name: str, fields: tuple) -> None:
        probe.hits += 1
        tid = thread.tid if thread is not None else process.pid
        self.session.buffers.put((self.debug.instruction_count(), process.pid, tid,
                                  probe.spec.text, 0, (), None, probe.spec.kind, name, fields))

    def _thread_of(self, process):
        """The thread raising an event of `process`: the kernel's current one when it belongs
        to the process, otherwise (killed from elsewhere) none: the record names the pid."""
        current = self.debug.current_thread()
        return current if current is not None and current.process is process else None

    def _proc(self, event: str, process, fields: tuple) -> None:
        if not self.session.monitor.is_traced(process):
            return
        for probe in self._probes(PROC, lambda spec: spec.event == event):
            self._record(probe, process, self._thread_of(process), event, fields)

    # ---- events (kernel_model/debug/) --------------------------------------------------------
    def fork(self, parent, child) -> None:
        self._proc("fork", parent, (("child_pid", child.pid),))

    def vfork(self, parent, child) -> None:
        self._proc("vfork", parent, (("child_pid", child.pid),))

    def exec(self, process, path: bytes, argv) -> None:
        self._proc("exec", process, (("path", path.decode(errors="replace")),
                                     ("argv", [a.decode(errors="replace") for a in argv])))

    def exit(self, process, status: int) -> None:
        if status & 0x7f:                              # killed by a signal (wait status word)
            fields = (("signal", signal_name(status & 0x7f)), ("core", 1 if status & 0x80 else 0))
        else:
            fields = (("code", status >> 8 & 0xff),)
        self._proc("exit", process, fields)

    def signal(self, process, thread, signal: int, info: dict | None, action: str = "handler") -> None:
        if not self.session.monitor.is_traced(process):
            return
        if thread is None:
            fields = (("signal", signal_name(signal)), ("action", "killed"))
        else:
            fields = (("signal", signal_name(signal)), ("action", action),
                      ("code", (info or {}).get("code", 0)))
        for probe in self._probes(SIGNAL, lambda spec: spec.signal == signal):
            self._record(probe, process, thread, signal_name(signal), fields)

    def signal_ignored(self, process, thread, signal: int, info: dict | None) -> None:
        self.signal(process, thread, signal, info, action="ignored")

    def signal_stopped(self, process, thread, signal: int, info: dict | None) -> None:
        self.signal(process, thread, signal, info, action="stopped")
