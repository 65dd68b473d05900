"""The tracing facility's event masks and their precedence rules (US 7,185,320 [0035]-[0036]).

The patent describes HP-UX ttrace(2): a tracer sets event flags "in the context of a traced
process, or its individual threads" (TT_PROC_SET_EVENT_MASK, TT_LWP_SET_EVENT_MASK, each a
`ttevent_t` of event flags `tte_events` and options `tte_opts`):

  [0035] "When an event flag is set in the context of the process, all threads in the process
         respond to the event. When set in the context of a thread, only the specific thread
         will respond to the event."
  [0036] "If an event is requested by a process, the event mask of the thread is not examined.
         For the event mask of the thread to be significant, the process event must be unset.
         Similarly, if an event option is enabled in the process, the option for the thread is
         not considered. [...] if tteo_proc_inherit is set, the child process inherits the
         event mask of its parent."
         "If the signal being processed has its mask bit set, signal processing continues as
         though the process was not being traced [...] if the signal mask bit is not set [...]
         the traced thread is stopped and the tracing process is notified."

This module is those rules and nothing else (plain data, no kernel): the facility
(kernel_model/debug/tracing/facility.py) asks it whether a thread responds to an event, and the
property tests check it against a reference model written from the patent's sentences.
"""
import enum
from dataclasses import dataclass


class TraceEvent(enum.IntFlag):
    """Event flags (ttrace's TTEVT_*). A thread that responds to one stops and its tracer is
    notified."""
    NONE = 0
    FORK = 1 << 0        # TTEVT_FORK: the parent thread and the child's first thread stop
    VFORK = 1 << 1       # TTEVT_VFORK: the child's first thread stops at once; the parent
                         # thread when its child has exec'd or exited (it sleeps until then)
    EXEC = 1 << 2        # TTEVT_EXEC: the thread stops at the new image's entry
    EXIT = 1 << 3        # TTEVT_EXIT: the thread stops at exit/exit_group, before the process
                         # goes; the tracer is told when it has exited
    SIGNAL = 1 << 4      # TTEVT_SIGNAL: a signal about to be delivered stops the thread,
                         # unless the process's signal mask lets it pass
    SYSCALL_ENTRY = 1 << 5   # TTEVT_SYSCALL_ENTRY: the thread stops before a system call runs
                             # (its arguments in their registers, which the tracer may change)
    SYSCALL_EXIT = 1 << 6    # TTEVT_SYSCALL_RETURN: the thread stops after it, the result in
                             # its register
    ALL = FORK | VFORK | EXEC | EXIT | SIGNAL | SYSCALL_ENTRY | SYSCALL_EXIT


class TraceOption(enum.IntFlag):
    """Event options (ttrace's TTEO_*)."""
    NONE = 0
    INHERIT = 1 << 0            # TTEO_PROC_INHERIT: a fork/vfork child gets the parent's masks
    UNTRACED_CHILDREN = 1 << 1  # TTEO_NOSTRCHLD: fork/vfork children are not traced at all
    ALL = INHERIT | UNTRACED_CHILDREN


EVENT_NAMES = {TraceEvent.FORK: "fork", TraceEvent.VFORK: "vfork", TraceEvent.EXEC: "exec",
               TraceEvent.EXIT: "exit", TraceEvent.SIGNAL: "signal",
               TraceEvent.SYSCALL_ENTRY: "syscall-entry", TraceEvent.SYSCALL_EXIT: "syscall-exit"}


@dataclass
class EventMask:
    """One context's flags: a process's or a thread's (a `ttevent_t`: tte_events, tte_opts and
    tte_signals). `signals` is the per-signal mask: a set bit lets that signal pass untraced
    (which context's mask applies: passing_signals)."""
    events: TraceEvent = TraceEvent.NONE
    options: TraceOption = TraceOption.NONE
    signals: int = 0


def responds(process_mask: EventMask, thread_mask: EventMask | None, event: TraceEvent) -> bool:
    """Does a thread respond to `event`? The process's flag first: when it is set the thread's
    mask is not examined; only when it is unset does the thread's own flag decide. (For one
    flag that amounts to either being set; written the patent's way round on purpose.)"""
    if process_mask.events & event:
        return True
    return thread_mask is not None and bool(thread_mask.events & event)


def option_on(process_mask: EventMask, thread_mask: EventMask | None, option: TraceOption) -> bool:
    """An option enabled in the process is on for every thread, whatever the thread says."""
    if process_mask.options & option:
        return True
    return thread_mask is not None and bool(thread_mask.options & option)


def child_mask(process_mask: EventMask, thread_mask: EventMask | None) -> EventMask:
    """The event mask a traced fork/vfork child's process starts with: the parent's (events,
    options, so that grandchildren inherit too, and signal mask) when the forking thread has the inherit option
    on, else an empty one (the child is traced but responds to nothing until the tracer sets
    flags). Thread masks are not inherited: the child's first thread starts with none."""
    if option_on(process_mask, thread_mask, TraceOption.INHERIT):
        return EventMask(process_mask.events, process_mask.options, process_mask.signals)
    return EventMask()


def passing_signals(process_mask: EventMask, thread_mask: EventMask | None) -> int:
    """The per-signal mask that applies to a thread: the process's where the process requests
    SIGNAL (the thread's mask is then not examined, [0036]), else the thread's own — the mask
    of the context whose flag made the thread respond."""
    if process_mask.events & TraceEvent.SIGNAL or thread_mask is None:
        return process_mask.signals
    return thread_mask.signals


def bit(signal: int) -> int:
    """A signal's bit in a sigset_t (signal 1 is bit 0)."""
    return 1 << (signal - 1)


def signal_passes(pass_mask: int, signal: int) -> bool:
    """The per-signal mask: with the signal's bit set, processing continues as if untraced."""
    return bool(pass_mask & bit(signal))


def signal_set(signals) -> int:
    """A mask with the bits of `signals` (numbers 1..64) set, as sigset_t has them."""
    mask = 0
    for signal in signals:
        if not 1 <= signal <= 64:
            raise ValueError(f"no signal {signal}: signals are 1..64")
        mask |= bit(signal)
    return mask
