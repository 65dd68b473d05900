"""The door's events and who hears them (part of the debug interface, kernel_model/debug/).

Subscribers hear the events of EVENTS they have methods for (facade.py's docstring says when
each comes); tracers are asked what they wait for, for deadlock reports; syscall watchers hear
every system call's entry and exit (the dispatcher asks `syscall_watchers` first, so that a
run nobody watches pays nothing). The tools' lists are replaced, not changed, when a tool leaves
(unsubscribe): whoever iterates one keeps the list it started with.
"""
from ..errors import KernelError

EVENTS = ("pre_fork", "fork", "fork_failed", "vfork", "vfork_done", "exec", "exit", "signal",
          "space_released", "syscall_entry", "syscall_exit", "image_mapped",
          "timer_tick", "timer_tick_batch", "timer_tick_tally", "image_unmapped", "thread_switch")


class DebugEvents:
    def __init__(self):
        self.tracers: list = []                 # tools: objects with waits_for()
        self.subscribers: list = []
        self.syscall_watchers: list = []        # objects with syscall_entry/exit

    def subscribe(self, subscriber, events=None) -> None:
        """`subscriber` hears of the events it has methods for; of those in `events` (names
        from EVENTS) only, when given."""
        if events is not None:
            unknown = set(events) - set(EVENTS)
            if unknown:
                raise KernelError(f"no debug event {sorted(unknown)[0]!r} (have: {', '.join(EVENTS)})")
            subscriber = _Subscription(subscriber, frozenset(events))
        self.subscribers.append(subscriber)

    def unsubscribe(self, subscriber) -> None:
        """`subscriber` hears of no event any more (a tool that detached), nor is it asked what
        it waits for."""
        self.subscribers = [s for s in self.subscribers
                            if s is not subscriber and getattr(s, "subscriber", None) is not subscriber]
        self.tracers = [t for t in self.tracers if t is not subscriber]
        self.syscall_watchers = [w for w in self.syscall_watchers if w is not subscriber]

    def emit(self, event: str, *args, **kwargs) -> None:
        for subscriber in self.subscribers:
            handler = getattr(subscriber, event, None)
            if handler is not None:
                handler(*args, **kwargs)

    # ---- tracers (what a deadlock report says the tools wait for) ---------------------------
    def register_tracer(self, tracer) -> None:
        """`tracer.waits_for() -> str | None`: what the tool waits for, for deadlock reports."""
        self.tracers.append(tracer)

    def tool_waits(self) -> list[str]:
        return [line for line in (t.waits_for() for t in self.tracers) if line]

    # ---- system calls ------------------------------------------------------------------------
    def add_syscall_watcher(self, watcher) -> None:
        self.syscall_watchers.append(watcher)

    def remove_syscall_watcher(self, watcher) -> None:
        if watcher in self.syscall_watchers:
            self.syscall_watchers.remove(watcher)

    def syscall_watchers_of(self, name: str):
        """The watchers, if one of them watches the call `name` (each hears it then, as
        before), else an empty tuple: the dispatcher then runs the call as if nobody watched.
        A watcher's `syscall_names` (a set of names) says which calls it watches; one without,
        or with None, watches every call (strace, a tracer's syscall stops). As a tracepoint
        sys_enter_NAME costs nothing to other calls (issue 31: trace -p syscall:NAME paid
        for every call of a syscall-heavy program; bench/trace_cost.py)."""
        watchers = self.syscall_watchers
        for watcher in watchers:
            names = getattr(watcher, "syscall_names", None)
            if names is None or name in names:
                return watchers
        return ()

    def stops_at_syscalls(self, thread) -> bool:
        """Whether a watcher stops `thread` at each syscall's entry and exit, as a ptrace
        tracer with PTRACE_SYSCALL does (strace; its `stops_tracee(thread)`): each stop is a
        point where the thread gives the CPU up (process/sched.py hand_over)."""
        for watcher in self.syscall_watchers:
            stops = getattr(watcher, "stops_tracee", None)
            if stops is not None and stops(thread):
                return True
        return False

    def syscall_entry(self, thread, name: str, args) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_entry(thread, name, args)

    def syscall_resumed(self, thread, name: str, args) -> bool:
        """A call its tracer stopped at the entry runs now: True if a watcher stops it again
        (the exit stop of exit/exit_group, kernel_model/debug/tracing/syscall_stops.py)."""
        return any(watcher.syscall_resumed(thread, name, args) for watcher in self.syscall_watchers
                   if hasattr(watcher, "syscall_resumed"))

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_exit(thread, name, args, result)

    def syscall_interrupted(self, thread, name: str, errno: int | None = None) -> None:
        """`thread`'s call `name`, asleep, was interrupted by a signal it has a handler for:
        it ends here, before the handler runs, and restarts or fails with EINTR after it
        (strace's `= ? ERESTARTSYS` line, kernel_model/signals/delivery.py); or, restartable,
        by a signal it ignores, and it is made again (a traced task's view: the next entry of
        the call is a new call). `errno`: the code it returned, when its name does not say it
        (a socket's wait under a timeout: EINTR)."""
        for watcher in self.syscall_watchers:
            interrupted = getattr(watcher, "syscall_interrupted", None)
            if interrupted is not None:
                interrupted(thread, name, errno)


class _Subscription:
    """A subscriber that asked for some events only: the others are not its methods."""
    __slots__ = ("subscriber", "events")

    def __init__(self, subscriber, events: frozenset):
        self.subscriber, self.events = subscriber, events

    def __getattr__(self, name: str):
        if name in EVENTS and name not in self.events:
            raise AttributeError(name)
        return getattr(self.subscriber, name)
