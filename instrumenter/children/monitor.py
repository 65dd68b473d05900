"""The process monitor (US 7,185,320, FIG. 3 item 320 and FIG. 5): which processes the tool traces,
what the kernel announced it is about to create, and who deals with each child.

Fed by the kernel's debug interface (kernel_model/debug/). A pre-fork event carries the pid
the child will get and whether it is a vfork; the fork/vfork event that follows is checked
against it, and so is a failure (FIG. 5: a vfork that failed, or a child with another pid, is
reported — the tool would otherwise act on the wrong process). Children of traced processes
are traced or not as the policy (instrumenter/children/policies.py) says; the monitor dispatches every
process event and every trap of an untraced process in a shared space to it.

Its one-line reports (`reports`) are part of a run's result, in event order.

The monitor is also the processes' tracer in the debug interface's tracing facility (US 7,185,320
[0034]-[0037], kernel_model/debug/tracing/facility.py): it attaches to the first process with the
policy's fork/vfork event flags and options, so that the kernel stops a forking thread, the new
child's first thread, and a vfork parent at vfork-done, and tells the monitor; the policy says
which stops it resumes (every one, except under `naive`: FIG. 1's tool resumes only what names
the process it watches).
"""
from dataclasses import dataclass

from kernel_model.errno import NAMES as ERRNO_NAMES


@dataclass(frozen=True)
class Prediction:
    """What a pre-fork event announced."""
    parent: int
    child_pid: int
    vfork: bool

    @property
    def kind(self) -> str:
        return "vfork" if self.vfork else "fork"


class ProcessMonitor:
    def __init__(self, session, policy):
        self.session = session
        self.debug = session.debug
        self.policy = policy
        self.traced: set[int] = set()                       # membership only, never iterated
        self.predictions: dict[int, Prediction] = {}        # parent pid -> pending pre-fork
        self.reports: list[str] = []
        self.root_pid: int | None = None                    # the first process traced
        policy.bind(self)
        self.debug.subscribe(self)
        self.debug.register_tracer(self)

    # ---- bookkeeping ---------------------------------------------------------------------
    def trace(self, process) -> None:
        self.traced.add(process.pid)
        if self.root_pid is None:
            self.root_pid = process.pid
        if self.debug.tracer_of(process) is None:
            self.debug.attach(process, self, self.policy.trace_events, self.policy.trace_options)

    def is_traced(self, process) -> bool:
        return process.pid in self.traced

    def report(self, text: str) -> None:
        self.reports.append(text)

    def waits_for(self) -> str | None:
        """For the kernel's deadlock report: what the tool itself is waiting for."""
        return self.policy.waits_for()

    # ---- the tracing facility's stops ----------------------------------------------------
    def trace_stop(self, stop) -> None:
        """A traced thread stopped at a fork/vfork event: the policy resumes it or not."""
        self.policy.on_trace_stop(stop)

    # ---- the trap gate of shared spaces (kernel_model/debug/ set_gate) ------------------
    def gate(self, handler, address: int, frame, thread) -> bool:
        if thread.process.pid in self.traced:
            return handler(frame, thread)
        return self.policy.untraced_trap(handler, address, frame, thread)

    # ---- process events ------------------------------------------------------------------
    def pre_fork(self, parent, child_pid: int, *, vfork: bool) -> None:
        if parent.pid not in self.traced:
            return
        prediction = self.predictions[parent.pid] = Prediction(parent.pid, child_pid, vfork)
        self.report(f"pre-fork pid {parent.pid} -> {child_pid} ({prediction.kind})")
        self.policy.pre_fork(parent, prediction)

    def fork(self, parent, child) -> None:
        self._created(parent, child, vfork=False)

    def vfork(self, parent, child) -> None:
        self._created(parent, child, vfork=True)

    def _created(self, parent, child, *, vfork: bool) -> None:
        if parent.pid not in self.traced:
            if not vfork:           # e.g. a lazily detached vfork child, still patched, forks
                self.policy.on_untraced_fork(parent, child)
            return
        self._check(self.predictions.pop(parent.pid, None), parent, child, vfork)
        if self.policy.traces_children:
            self.traced.add(child.pid)
        if vfork:
            self.policy.on_vfork(parent, child)
        else:
            self.policy.on_fork(parent, child)

    def _check(self, prediction, parent, child, vfork: bool) -> None:
        kind = "vfork" if vfork else "fork"
        if prediction is None:
            self.report(f"pre-fork prediction wrong: no pre-fork event before the {kind} "
                        f"of pid {parent.pid} (child pid {child.pid})")
        elif prediction.child_pid != child.pid:
            self.report(f"pre-fork prediction wrong: expected pid {prediction.child_pid}, "
                        f"{kind} child is pid {child.pid}")
        elif prediction.vfork != vfork:
            self.report(f"pre-fork prediction wrong: announced a {prediction.kind}, "
                        f"pid {parent.pid} made a {kind} (child pid {child.pid})")

    def fork_failed(self, parent, child_pid: int, errno: int) -> None:
        """FIG. 5 query 506: the announced child never came (the call fails in the parent)."""
        prediction = self.predictions.pop(parent.pid, None)
        if prediction is None:
            return
        self.report(f"pre-fork prediction wrong: {prediction.kind} of pid {parent.pid} failed "
                    f"({ERRNO_NAMES.get(errno, errno)}), no pid {child_pid}")
        self.policy.on_failed(parent, prediction)

    def vfork_done(self, parent, child) -> None:
        if parent.pid in self.traced:
            self.policy.on_vfork_done(parent, child)

    def exit(self, process, status) -> None:
        self.traced.discard(process.pid)
        self.predictions.pop(process.pid, None)
