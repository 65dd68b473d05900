"""The tracing facility (US 7,185,320 [0034]-[0037]): stops, event masks, per-signal masks, resume.

Part of the debug interface (kernel_model/debug/, one of its parts). What ttrace(2)
and ptrace(2) give a debugger, for the tools of this sandbox (the instrumenter's process monitor,
a GDB stub):

  attach(process, tracer, events, options)   the process is traced by `tracer` (TT_PROC_ATTACH,
                                             PTRACE_SEIZE); one tracer per process
  set_event_mask(process | thread, events, options)
                                             event flags and options of the process, or of one
                                             of its threads (precedence: kernel_model/debug/tracing/masks.py)
  set_signal_mask(process | thread, signals) signals that pass untraced; any other signal about
                                             to be delivered to a thread that responds to
                                             SIGNAL stops it (ptrace's signal-delivery-stop);
                                             the process's mask where the process requests
                                             SIGNAL, else the thread's (masks.py)
  stop(thread)                               stop a thread now and notify (TT_LWP_STOP,
                                             PTRACE_INTERRUPT)
  resume(thread, signal=None)                end a stop (TT_LWP_CONTINUE, PTRACE_CONT): with a
                                             signal number it is delivered, without it a stopped
                                             signal is suppressed; a vfork parent whose child
                                             has not exec'd or exited cannot be resumed
                                             (VforkParentBusy, patent [0037])
  trace_stop_of(thread)                      the stop a thread is in, or None

A stopped thread is a thread of the kernel that does not run until resumed: it sleeps on its
tracer channel (kernel.tracer_channel), so a deadlock report names it and what it waits for.
The tracer is told of every stop with `tracer.trace_stop(stop)` (a TraceStop), synchronously,
in the order the kernel makes them; it may resume the thread inside that call (the thread then
never leaves the CPU), later from another event, or never (US 7,185,320 FIG. 1). A tracer with a
`trace_exit(pid, status)` method hears of its processes' exits when EXIT is in their masks.

Where the events stop (ttrace's rules, as gdb's inf-ttrace.c relies on them):
  fork   the forking thread (after the call, the child's pid in its result register) and the
         child's first thread (before its first instruction) both stop and both are reported:
         the parent's stop first. The child is traced by the same tracer unless the
         UNTRACED_CHILDREN option is on, with the parent's masks if INHERIT is on.
  vfork  the child's first thread stops at once (it runs in its parent's memory); the parent
         thread sleeps until its child has exec'd or exited, and stops then (vfork-done), the
         `is_parent` report. Resuming it before that is an error.
  exec   the thread stops at the new image's entry.
  syscall-entry / syscall-exit   before / after a system call (kernel_model/debug/tracing/syscall_stops.py).
  signal before delivery, unless the signal passes; SIGKILL never stops.
  exit   at exit/exit_group and before a death by signal (kernel_model/debug/tracing/syscall_stops.py).
"""
from dataclasses import dataclass, field

from ...errors import TraceError, VforkParentBusy
from ...process.proc import RUNNABLE, SLEEPING, ZOMBIE
from ...process.sched import TRACER_STOP
from ...signals import SIGKILL
from ...signals import signal_name
from .masks import (EventMask, TraceEvent, TraceOption, bit, child_mask, option_on,
                          passing_signals, responds, signal_passes, signal_set)

SI_USER = 0              # siginfo's si_code of a signal sent by a process (kill)


@dataclass(frozen=True)
class TraceStop:
    """What a stopped thread logged (ttrace's ttstate_t): the event, who, and for fork/vfork
    the other side (`other_pid`, ttrace's tts_fpid) and which side this is."""
    event: str                   # fork | vfork | exec | signal | syscall-entry | syscall-exit
                                 # | stop | breakpoint
    pid: int
    tid: int
    thread: object = field(compare=False, repr=False)
    other_pid: int | None = None
    is_parent: bool = False
    signal: int | None = None    # signal: the signal about to be delivered
    info: dict | None = field(default=None, compare=False, repr=False)   # its siginfo
    reason: str = ""             # breakpoint/stop: what the tool said
    syscall: str | None = None   # syscall-entry/syscall-exit: the call's name
    result: int | None = None    # syscall-exit: its result; exit: the exit status

    def describe(self) -> str:
        """The stop as a deadlock report names it ("stopped at ..., waiting for its tracer")."""
        if self.event in ("fork", "vfork"):
            if self.is_parent:
                return f"at its {self.event} event (child pid {self.other_pid})"
            return f"at the {self.event} event of pid {self.other_pid} (its parent)"
        if self.event == "signal":
            return f"at signal {signal_name(self.signal)}"
        if self.event == "exec":
            return "at its exec event"
        if self.event == "exit":
            return f"at its exit (status {self.result})"
        if self.event == "syscall-entry":
            return f"at the entry of {self.syscall}"
        if self.event == "syscall-exit":
            return f"at the return of {self.syscall}"
        return self.reason or "on its tracer's request"


@dataclass
class _Traced:
    tracer: object
    mask: EventMask


class TracingFacility:
    _tracing: dict | None = None

    def __init__(self, kernel=None):
        self._kernel = kernel

    # ---- state (kept per pid and tid: stable numbers, never reused in a run) ----------------
    def _trace_tables(self) -> dict:
        tables = self._tracing
        if tables is None:
            tables = self._tracing = {"processes": {}, "threads": {}, "stops": {}, "passing": {}}
        return tables

    def _traced(self, process) -> _Traced | None:
        return self._tracing["processes"].get(process.pid) if self._tracing else None

    def _traced_or_error(self, process) -> _Traced:
        traced = self._traced(process)
        if traced is None:
            raise TraceError(f"pid {process.pid} is not traced")
        return traced

    # ---- attaching --------------------------------------------------------------------------
    def attach(self, process, tracer, events: TraceEvent = TraceEvent.NONE,
               options: TraceOption = TraceOption.NONE) -> None:
        """Trace `process`: `tracer.trace_stop(stop)` hears of its threads' stops."""
        processes = self._trace_tables()["processes"]
        current = processes.get(process.pid)
        if current is not None and current.tracer is not tracer:
            raise TraceError(f"pid {process.pid} is already traced by another tool")
        if getattr(process, "state", None) == ZOMBIE:
            raise TraceError(f"pid {process.pid} has exited")
        processes[process.pid] = _Traced(tracer, EventMask(TraceEvent(events), TraceOption(options)))

    def detach(self, process) -> None:
        """Untrace `process`: its masks are forgotten and its stopped threads resume."""
        tables = self._trace_tables()
        tables["processes"].pop(process.pid, None)
        for thread in process.threads:
            tables["threads"].pop(thread.tid, None)
            if tables["stops"].pop(thread.tid, None) is not None:
                self._release(thread)

    def is_traced(self, process) -> bool:
        return self._traced(process) is not None

    def tracer_of(self, process):
        traced = self._traced(process)
        return traced.tracer if traced is not None else None

    # ---- masks ------------------------------------------------------------------------------
    def set_event_mask(self, target, events: TraceEvent,
                       options: TraceOption = TraceOption.NONE) -> None:
        """Set the event flags and options of a traced process or of one of its threads
        (`target` is a Process or a Thread); the signal mask is kept."""
        mask = self._mask_of(target, create=True)
        mask.events, mask.options = TraceEvent(events), TraceOption(options)

    def event_mask(self, target) -> EventMask:
        """A copy of the flags set on `target` (a thread without its own: an empty mask)."""
        mask = self._mask_of(target, create=False)
        return EventMask() if mask is None else EventMask(mask.events, mask.options, mask.signals)

    def set_signal_mask(self, target, signals) -> None:
        """The signals (numbers) that pass untraced for a traced process or one of its threads
        (`target`): their processing continues as if the process were not traced. Every other
        signal stops a thread that responds to SIGNAL."""
        try:
            passing = signal_set(signals)
        except ValueError as e:
            raise TraceError(str(e)) from None
        self._mask_of(target, create=True).signals = passing

    def responds(self, thread, event: TraceEvent) -> bool:
        """Does `thread` respond to `event` (its process traced, the flag set in the process's
        mask or, the process's unset, in the thread's)?"""
        traced = self._traced(thread.process)
        if traced is None:
            return False
        return responds(traced.mask, self._tracing["threads"].get(thread.tid), event)

    def _mask_of(self, target, *, create: bool) -> EventMask | None:
        process = getattr(target, "process", None)
        if process is None:                                    # a Process
            return self._traced_or_error(target).mask
        self._traced_or_error(process)
        masks = self._tracing["threads"]
        if create and target.tid not in masks:
            masks[target.tid] = EventMask()
        return masks.get(target.tid)

    # ---- stops ------------------------------------------------------------------------------
    def trace_stop_of(self, thread) -> TraceStop | None:
        return self._tracing["stops"].get(thread.tid) if self._tracing else None

    def stop(self, thread) -> TraceStop:
        """Stop `thread` and notify its tracer (a thread already stopped stays in its stop).
        A runnable thread, or one sleeping in a blocking call (the call runs again when it
        resumes, as after a signal with SA_RESTART), stops now; any other (a vfork parent
        waiting for its child, a job-control stop) is stopped where it is and does not run
        when it wakes, until resumed."""
        self._traced_or_error(thread.process)
        stop = self.trace_stop_of(thread)
        if stop is not None:
            return stop
        if thread.state == ZOMBIE:
            raise TraceError(f"tid {thread.tid} has exited")
        stop = TraceStop("stop", thread.process.pid, thread.tid, thread,
                         reason="on its tracer's request")
        if thread.state == RUNNABLE or thread.state == SLEEPING and thread.blocked_call:
            self.enter_stop(thread, stop)
        else:
            self._trace_tables()["stops"][thread.tid] = stop
            self._notify(thread, stop)
        return stop

    def resume(self, thread, signal: int | None = None) -> None:
        """End `thread`'s stop. `signal`: deliver it (a signal stop's own, or another); None:
        deliver nothing (a signal stop's signal is suppressed)."""
        child = self._vfork_child_of(thread)
        if child is not None:
            raise VforkParentBusy(
                f"pid {thread.process.pid} tid {thread.tid} is a vfork parent: its child pid "
                f"{child.pid} has not exec'd or exited, so it cannot be resumed",
                parent_pid=thread.process.pid, child_pid=child.pid)
        stop = self._trace_tables()["stops"].pop(thread.tid, None)
        if stop is None and not _in_tracer_stop(thread):
            raise TraceError(f"pid {thread.process.pid} tid {thread.tid} is not stopped")
        if signal is not None:
            self._inject(thread, signal, stop)
        self._release(thread)

    def record_tool_stop(self, thread, reason: str) -> None:
        """A stop the tool made itself (stop_for_tracer: a breakpoint it does not service
        now): resume() ends it like any other; nobody is notified, the tool knows."""
        self._trace_tables()["stops"][thread.tid] = TraceStop(
            "breakpoint", thread.process.pid, thread.tid, thread,
            reason=reason.removesuffix(", waiting for its tracer"))

    def forget_tool_stop(self, thread) -> None:
        if self._tracing:
            self._tracing["stops"].pop(thread.tid, None)

    # ---- tracer stops a tool makes itself (ptrace's breakpoint stop) --------------------------
    def stop_for_tracer(self, thread, reason: str) -> None:
        """Leave `thread` stopped until its tracer resumes it (resume_from_tracer, or resume)."""
        self._kernel.stop_for_tracer(thread, reason)
        self.record_tool_stop(thread, reason)

    def resume_from_tracer(self, thread) -> None:
        self.forget_tool_stop(thread)
        self._kernel.resume_from_tracer(thread)

    def pass_signal_once(self, thread, signal: int) -> None:
        """`signal`, posted to `thread` next, is delivered without a signal stop (it was the
        tracer's already: a resume with it, a death after its exit stop)."""
        self._trace_tables()["passing"][thread.tid] = signal

    def enter_stop(self, thread, stop: TraceStop, *, notify: bool = True) -> None:
        """Put `thread` in `stop`, tell its tracer, and take it off the CPU unless the tracer
        resumed it inside the notification (the events' stops here, the system-call and exit
        stops of syscall_stops.py)."""
        self._trace_tables()["stops"][thread.tid] = stop
        self._park(thread, stop)
        if notify:
            self._notify(thread, stop)
        kernel = self._kernel
        if _in_tracer_stop(thread) and kernel.in_hook and kernel.current is thread:
            thread.process.machine.stop()

    def _park(self, thread, stop: TraceStop) -> None:
        self._kernel.scheduler.sleep(thread, [(TRACER_STOP, thread.tid)],
                                     f"{stop.describe()}, waiting for its tracer", None)

    def _release(self, thread) -> None:
        if _in_tracer_stop(thread):
            self._kernel.scheduler.make_runnable(thread)

    def _notify(self, thread, stop: TraceStop) -> None:
        traced = self._traced(thread.process)
        notify = getattr(traced.tracer, "trace_stop", None) if traced is not None else None
        if notify is not None:
            notify(stop)

    def _inject(self, thread, signal: int, stop: TraceStop | None) -> None:
        """The signal the tracer resumes with: delivered once without another stop."""
        if not 1 <= signal <= 64:
            raise TraceError(f"no signal {signal}: signals are 1..64")
        info = stop.info if stop is not None and stop.signal == signal and stop.info else \
            {"code": SI_USER, "pid": 0}
        self.pass_signal_once(thread, signal)
        self._kernel.signals.post(thread.process, signal, thread=thread, info=info)

    def vfork_child_of(self, thread):
        """The vfork child `thread` lends its address space to, while the child has neither
        exec'd nor exited (None otherwise): the thread may not run until then (patent [0037];
        a debugger refuses to resume it with VforkParentBusy, as resume() does)."""
        return self._vfork_child_of(thread)

    def _vfork_child_of(self, thread):
        """The vfork child `thread` waits for, while it has neither exec'd nor exited."""
        kernel = self._kernel
        if kernel is None:
            return None
        for process in kernel.processes.values():
            if process.vfork_parent is thread and process.state != ZOMBIE:
                return process
        return None

    def holds_stopped(self, thread) -> bool:
        """The run loop asks before running a thread: a thread stopped where it slept (stop())
        or woken by a signal while stopped does not run; it goes back to its stop. SIGKILL
        ends any stop."""
        stops = self._tracing["stops"] if self._tracing else None
        if not stops or thread.tid not in stops:
            return False
        if (thread.pending_signals | thread.process.pending_signals) & bit(SIGKILL):
            del stops[thread.tid]
            return False
        self._park(thread, stops[thread.tid])
        return True

    # ---- the kernel's side: events that stop --------------------------------------------------
    def trace_signal(self, thread, signal: int, info: dict | None) -> bool:
        """Signals.deliver asks before acting on `signal` for `thread`: True when the signal is
        the tracer's now (the thread stopped; resume() decides what is delivered)."""
        if not self._tracing:
            return False
        if self._tracing["passing"].get(thread.tid) == signal:
            del self._tracing["passing"][thread.tid]
            return False
        traced = self._traced(thread.process)
        if traced is None or signal == SIGKILL or not self.responds(thread, TraceEvent.SIGNAL):
            return False
        passing = passing_signals(traced.mask, self._tracing["threads"].get(thread.tid))
        if signal_passes(passing, signal):
            return False
        self.enter_stop(thread, TraceStop("signal", thread.process.pid, thread.tid, thread,
                                     signal=signal, info=info))
        return True

    def trace_fork(self, parent, child, *, vfork: bool) -> None:
        """After the fork/vfork event: the child adopts the tracer, and the threads stop."""
        traced = self._traced(parent)
        thread = self._kernel.current if traced is not None and self._kernel is not None else None
        if thread is None or thread.process is not parent:
            return
        event = TraceEvent.VFORK if vfork else TraceEvent.FORK
        if not self.responds(thread, event):
            return
        name = "vfork" if vfork else "fork"
        thread_mask = self._tracing["threads"].get(thread.tid)
        child_thread = child.threads[0]
        if not option_on(traced.mask, thread_mask, TraceOption.UNTRACED_CHILDREN):
            self._tracing["processes"][child.pid] = _Traced(traced.tracer,
                                                            child_mask(traced.mask, thread_mask))
        if not vfork:
            self.enter_stop(thread, TraceStop(name, parent.pid, thread.tid, thread, other_pid=child.pid,
                                         is_parent=True))
        if self._traced(child) is not None:
            self.enter_stop(child_thread, TraceStop(name, child.pid, child_thread.tid, child_thread,
                                               other_pid=parent.pid))

    def trace_vfork_done(self, parent, child) -> None:
        """The vfork child exec'd or exited: its parent thread, asleep until now, stops."""
        if self._traced(parent) is None or self._kernel is None:
            return
        thread = next((t for t in parent.threads if ("vfork", child.pid) in t.wait_channels), None)
        if thread is None or not self.responds(thread, TraceEvent.VFORK):
            return
        self._tracing["stops"].pop(thread.tid, None)
        self.enter_stop(thread, TraceStop("vfork", parent.pid, thread.tid, thread, other_pid=child.pid,
                                     is_parent=True))

    def trace_exec(self, process) -> None:
        if self._traced(process) is None or self._kernel is None:
            return
        thread = self._kernel.current if self._kernel is not None else None
        if thread is not None and thread.process is process and self.responds(thread, TraceEvent.EXEC):
            self.enter_stop(thread, TraceStop("exec", process.pid, thread.tid, thread))

    def trace_exit(self, process, status: int) -> None:
        """The process is gone: its tracer hears of it if EXIT is in a mask; its state goes."""
        if not self._tracing:
            return
        threads_of = getattr(process, "threads", ())       # a tool's stand-in may have none
        for thread in threads_of:
            self._tracing["stops"].pop(thread.tid, None)
            self._tracing["passing"].pop(thread.tid, None)
        traced = self._traced(process)
        if traced is None:
            return
        threads = self._tracing["threads"]
        if responds(traced.mask, None, TraceEvent.EXIT) or any(
                threads.get(t.tid) is not None and threads[t.tid].events & TraceEvent.EXIT
                for t in threads_of):
            notify = getattr(traced.tracer, "trace_exit", None)
            if notify is not None:
                notify(process.pid, status)
        del self._tracing["processes"][process.pid]
        for thread in threads_of:
            threads.pop(thread.tid, None)


def _in_tracer_stop(thread) -> bool:
    return thread.state == SLEEPING and (TRACER_STOP, thread.tid) in thread.wait_channels
