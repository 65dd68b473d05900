"""The tracing facility's system-call stops (ttrace's TTEVT_SYSCALL_ENTRY and
TTEVT_SYSCALL_RETURN, ptrace's syscall-enter-stop and syscall-exit-stop): part of the debug
interface, beside kernel_model/tracing_facility.py, whose masks decide who stops.

A thread that responds to SYSCALL_ENTRY stops before the call runs, its arguments in their
registers: the dispatcher rewinds it to the `syscall`/`int 0x80` instruction, as it does for a
call that sleeps, and marks the call as entered, so that when the tracer resumes it the call
runs (with the registers as the tracer left them) without a second entry stop. A thread that
responds to SYSCALL_EXIT stops after the call, its result in its register; resumed, it goes on
after the instruction. Calls that end the thread (exit, exit_group) have no exit stop.

The facility watches the system calls (DebugInterface.syscall_watchers) only once a mask asks
for these events, so an untraced run pays nothing.
"""
from .trace_masks import TraceEvent

SYSCALL_EVENTS = TraceEvent.SYSCALL_ENTRY | TraceEvent.SYSCALL_EXIT
ENTERED = "trace_entry_stopped"         # thread.restart key: the entry stop was made


class _SyscallWatcher:
    """The facility's syscall watcher: asks the masks at each entry and exit."""

    def __init__(self, facility):
        self.facility = facility

    def syscall_entry(self, thread, name: str, args) -> None:
        facility = self.facility
        if facility.responds(thread, TraceEvent.SYSCALL_ENTRY):
            thread.restart[ENTERED] = True
            facility.stop_at_syscall(thread, "syscall-entry", name)

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        facility = self.facility
        if facility.responds(thread, TraceEvent.SYSCALL_EXIT):
            facility.stop_at_syscall(thread, "syscall-exit", name, result)


class SyscallTraceStops:
    _syscall_watcher = None

    def watch_syscalls_for(self, events) -> None:
        """A mask now asks for system-call stops: watch the calls (once)."""
        if events & SYSCALL_EVENTS and self._syscall_watcher is None:
            self._syscall_watcher = _SyscallWatcher(self)
            self.syscall_watchers.append(self._syscall_watcher)

    def stop_at_syscall(self, thread, event: str, name: str, result: int | None = None) -> None:
        from .tracing_facility import TraceStop
        self._stop(thread, TraceStop(event, thread.process.pid, thread.tid, thread,
                                     syscall=name, result=result))
