"""The tracing facility's system-call stops (ttrace's TTEVT_SYSCALL_ENTRY and
TTEVT_SYSCALL_RETURN, ptrace's syscall-enter-stop and syscall-exit-stop): part of the debug
interface, beside kernel_model/debug/tracing/facility.py, whose masks decide who stops.

A thread that responds to SYSCALL_ENTRY stops before the call runs, its arguments in their
registers: the dispatcher rewinds it to the `syscall`/`int 0x80` instruction, as it does for a
call that sleeps, and marks the call as entered, so that when the tracer resumes it the call
runs (with the registers as the tracer left them) without a second entry stop. A thread that
responds to SYSCALL_EXIT stops after the call, its result in its register; resumed, it goes on
after the instruction. Calls that end the thread (exit, exit_group) have no return stop.

The EXIT event stops the same way at the entry of exit/exit_group (ttrace's TTEVT_EXIT, ptrace's
PTRACE_EVENT_EXIT): the process's memory and registers are still there for the tracer, the
stop's `result` is the exit status; resumed, the thread exits (and the tracer is told, as
trace_exit says). A thread that also responds to SYSCALL_ENTRY stops at the call's entry
first, then, resumed, at the exit stop, as under ptrace (unless the tracer changed the call).
A signal whose default action kills stops the thread the same way before the death (Linux
do_exit's PTRACE_EVENT_EXIT): `signal` is the killing signal and `result` the wait status;
resumed, the signal, still pending and passed, kills. SIGKILL does not stop: it ends any stop.

The facility watches the system calls (DebugInterface.syscall_watchers) only once a mask asks
for these events, so an untraced run pays nothing. The facility (facility.py) decides who
responds and makes the stops; this part asks it, and keeps only what is its own: its watcher
and the deaths it stopped before.
"""
from ...signals import SIGKILL
from ...syscalls.entry_stop import ENTERED  # noqa: F401  (the dispatcher reads it too)
from .facility import TraceStop
from .masks import TraceEvent

SYSCALL_EVENTS = TraceEvent.SYSCALL_ENTRY | TraceEvent.SYSCALL_EXIT
WATCHED_EVENTS = SYSCALL_EVENTS | TraceEvent.EXIT
EXIT_CALLS = ("exit", "exit_group")
EXIT_STOPPED = "trace_exit_stopped"     # thread.restart key: ... and the exit stop


class _SyscallWatcher:
    """The facility's syscall watcher: asks the masks at each entry and exit."""

    def __init__(self, facility, stops):
        self.facility = facility            # facility.py: responds()
        self.stops = stops                  # SyscallTraceStops: stop_at_syscall()

    def syscall_entry(self, thread, name: str, args) -> None:
        facility = self.facility
        if facility.responds(thread, TraceEvent.SYSCALL_ENTRY):
            thread.restart[ENTERED] = True
            self.stops.stop_at_syscall(thread, "syscall-entry", name)
        elif name in EXIT_CALLS and facility.responds(thread, TraceEvent.EXIT):
            self._exit_stop(thread, name, args)

    def syscall_resumed(self, thread, name: str, args) -> bool:
        """A call stopped at its entry runs now (the tracer resumed it): exit/exit_group
        still makes its exit stop. True: stopped."""
        if name in EXIT_CALLS and ENTERED in thread.restart and EXIT_STOPPED not in thread.restart \
                and self.facility.responds(thread, TraceEvent.EXIT):
            self._exit_stop(thread, name, args)
            return True
        return False

    def _exit_stop(self, thread, name: str, args) -> None:
        thread.restart[ENTERED] = thread.restart[EXIT_STOPPED] = True
        self.stops.stop_at_syscall(thread, "exit", name, args[0] & 0xFF)

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        facility = self.facility
        if facility.responds(thread, TraceEvent.SYSCALL_EXIT):
            self.stops.stop_at_syscall(thread, "syscall-exit", name, result)


class SyscallTraceStops:
    def __init__(self, kernel, facility, events):
        self._kernel = kernel
        self._facility = facility           # facility.py: who responds, and the stops
        self._events = events               # events.py: the syscall watchers
        self._syscall_watcher = None
        self._dying: dict = {}              # tid -> the signal whose exit stop was made

    def watch_syscalls_for(self, events) -> None:
        """A mask now asks for system-call or exit stops: watch the calls (once)."""
        if events & WATCHED_EVENTS and self._syscall_watcher is None:
            self._syscall_watcher = _SyscallWatcher(self._facility, self)
            self._events.add_syscall_watcher(self._syscall_watcher)

    def trace_death(self, thread, signal: int, status: int) -> bool:
        """Signals asks before `signal` kills `thread`'s process (wait status `status`): True
        when the thread stopped first (its EXIT stop); resumed, the signal kills."""
        if signal == SIGKILL:
            return False
        dying = self._dying
        if dying.pop(thread.tid, None) == signal:
            return False            # its exit stop was made: the death goes on
        facility = self._facility
        if not facility.is_traced(thread.process) or not facility.responds(thread, TraceEvent.EXIT):
            return False
        dying[thread.tid] = signal
        facility.pass_signal_once(thread, signal)          # no second signal stop for it
        self._kernel.signals.post(thread.process, signal, thread=thread)
        facility.enter_stop(thread, TraceStop("exit", thread.process.pid, thread.tid, thread,
                                              signal=signal, result=status))
        return True

    def stop_at_syscall(self, thread, event: str, name: str, result: int | None = None) -> None:
        self._facility.enter_stop(thread, TraceStop(event, thread.process.pid, thread.tid, thread,
                                                    syscall=name, result=result))

    def forget_process(self, process) -> None:
        """The process is gone (trace_exit): so are its threads' deaths in progress."""
        for thread in getattr(process, "threads", ()):      # a tool's stand-in may have none
            self._dying.pop(thread.tid, None)
