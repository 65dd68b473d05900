"""The tracing facility follows the patent's precedence rules (US 7,185,320 [0035]-[0037]), checked
against a small reference model written from the patent's sentences, on random masks, options,
threads, events and signals.

The facility under test is the real one (the debug interface of a real Kernel) driven by its
kernel-side events on processes and threads made by hand: fork/vfork events with the forking
thread current, vfork-done, exec, and signals delivered by the kernel's own Signals.deliver (to
a handler-less SIG_IGN disposition, so that no guest needs to run). Every example is checked;
the @example cases pin each rule's both sides.
"""
import io

from hypothesis import example, given
from hypothesis import strategies as st

from kernel_model.debug import EventMask, TraceEvent, TraceOption, VforkParentBusy
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.process.proc import Process, Thread

SIG_IGN = 1                # <signal.h>: the disposition that ignores a signal

F, V, X, S = TraceEvent.FORK, TraceEvent.VFORK, TraceEvent.EXEC, TraceEvent.SIGNAL
I, U = TraceOption.INHERIT, TraceOption.UNTRACED_CHILDREN
STOP_EVENTS = [F, V, X, S]
SIGNALS = [1, 2, 3, 10, 12, 13, 14, 15, 17, 20, 28, 34, 40, 64]      # anything but SIGKILL/SIGSTOP


# ---- the reference model: the patent's sentences, one by one ------------------------------------
def ref_responds(process_events, thread_events, event) -> bool:
    """[0035]/[0036]: "If an event is requested by a process, the event mask of the thread is
    not examined. For the event mask of the thread to be significant, the process event must be
    unset." """
    if event in process_events:
        return True                       # all threads respond; the thread's mask unread
    return event in thread_events         # only now does the thread's flag count


def ref_option(process_options, thread_options, option) -> bool:
    """[0036]: "if an event option is enabled in the process, the option for the thread is not
    considered." """
    if option in process_options:
        return True
    return option in thread_options


def ref_child(process, thread):
    """[0036]/[0037]: a child that is traced adopts the parent's tracer ("after the child process
    is marked as a traced process and adopts the parent thread's debugger") and, with
    tteo_proc_inherit, "inherits the event mask of its parent"; with tteo_nostrchld it is not
    traced. Returns None (untraced) or the (events, options, signals) it starts with."""
    if ref_option(process["options"], thread["options"], U):
        return None
    if ref_option(process["options"], thread["options"], I):
        return (set(process["events"]), set(process["options"]), set(process["passing"]))
    return (set(), set(), set())


def ref_signal_stops(process, thread, signal) -> bool:
    """[0036]: "If the signal being processed has its mask bit set, signal processing continues
    as though the process was not being traced [...] if the signal mask bit is not set [...] the
    traced thread is stopped and the tracing process is notified." (for a thread that responds
    to signals). Whose mask: "If an event is requested by a process, the event mask of the
    thread is not examined" — the process's where the process requests signals, else the
    thread's own (a ttevent_t carries its signal mask)."""
    if S in process["events"]:
        return signal not in process["passing"]
    return S in thread["events"] and signal not in thread.get("passing", set())


# ---- the facility, driven by hand ----------------------------------------------------------
class Tool:
    def __init__(self, debug, resume_at_once: bool):
        self.debug, self.resume_at_once, self.stops = debug, resume_at_once, []

    def trace_stop(self, stop):
        self.stops.append((stop.event, stop.pid, stop.is_parent, stop.signal))
        if self.resume_at_once:
            self.debug.resume(stop.thread, stop.signal)


def _kernel():
    return Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                               stderr=CapturedOutput(), report=io.StringIO()))


def _process(kernel, pid: int, threads: int, ppid: int = 1) -> Process:
    process = Process(pid=pid, ppid=ppid, space=None, fds=None)
    for index in range(threads):
        thread = Thread(tid=pid + index * 1000, process=process, kstack_top=0)
        process.threads.append(thread)
        kernel.scheduler.add(thread)
    kernel.processes[pid] = process
    return process


def _flags(kind, members) -> object:
    value = kind(0)
    for member in members:
        value |= member
    return value


masks = st.fixed_dictionaries({
    "events": st.sets(st.sampled_from(STOP_EVENTS)),
    "options": st.sets(st.sampled_from([I, U])),
    "passing": st.sets(st.sampled_from(SIGNALS)),
})
process_masks = st.fixed_dictionaries({
    "events": st.sets(st.sampled_from(STOP_EVENTS)),
    "options": st.sets(st.sampled_from([I, U])),
    "passing": st.sets(st.sampled_from(SIGNALS)),
})


def _setup(process_mask, thread_masks, resume_at_once=True):
    kernel = _kernel()
    debug = kernel.debug
    parent = _process(kernel, 100, len(thread_masks))
    tool = Tool(debug, resume_at_once)
    debug.attach(parent, tool, _flags(TraceEvent, process_mask["events"]),
                 _flags(TraceOption, process_mask["options"]))
    debug.set_signal_mask(parent, process_mask["passing"])
    for thread, mask in zip(parent.threads, thread_masks):
        debug.set_event_mask(thread, _flags(TraceEvent, mask["events"]), _flags(TraceOption, mask["options"]))
        debug.set_signal_mask(thread, mask.get("passing", set()))
    return kernel, debug, parent, tool


def _as_sets(mask: EventMask):
    signals = {s for s in range(1, 65) if mask.signals & 1 << (s - 1)}
    return ({e for e in STOP_EVENTS + [TraceEvent.EXIT] if mask.events & e},
            {o for o in (I, U) if mask.options & o}, signals)


# ---- the properties --------------------------------------------------------------------------
@given(process_masks, st.lists(masks, min_size=1, max_size=3), st.sampled_from(STOP_EVENTS))
@example({"events": {F}, "options": set(), "passing": set()}, [{"events": set(), "options": set()}], F)
@example({"events": set(), "options": set(), "passing": set()}, [{"events": {F}, "options": set()}], F)
@example({"events": set(), "options": set(), "passing": set()}, [{"events": set(), "options": set()}], F)
def test_every_thread_responds_as_the_precedence_rule_says(process_mask, thread_masks, event):
    kernel, debug, parent, _ = _setup(process_mask, thread_masks)
    for thread, mask in zip(parent.threads, thread_masks):
        assert debug.responds(thread, event) == ref_responds(process_mask["events"], mask["events"], event)


@given(process_masks, st.lists(masks, min_size=1, max_size=3), st.data(), st.booleans())
@example({"events": {F}, "options": {I}, "passing": {10}}, [{"events": set(), "options": set()}],
         None, False)
@example({"events": {V}, "options": set(), "passing": set()}, [{"events": set(), "options": {I}}],
         None, True)
@example({"events": {V}, "options": {U}, "passing": set()}, [{"events": set(), "options": {I}}],
         None, True)
@example({"events": set(), "options": {I}, "passing": set()}, [{"events": {V}, "options": set()}],
         None, True)
def test_fork_and_vfork_stop_and_children_inherit_as_the_seed_says(process_mask, thread_masks, data,
                                                                   vfork):
    index = data.draw(st.integers(0, len(thread_masks) - 1)) if data is not None else 0
    kernel, debug, parent, tool = _setup(process_mask, thread_masks)
    forking, mask = parent.threads[index], thread_masks[index]
    kernel.current = forking
    child = _process(kernel, 200, 1, ppid=100)
    event = V if vfork else F
    if vfork:
        child.vfork_parent = forking
        debug.vfork(parent, child)
    else:
        debug.fork(parent, child)
    stops = ref_responds(process_mask["events"], mask["events"], event)
    expected_child = ref_child(process_mask, mask) if stops else None
    name = "vfork" if vfork else "fork"
    expected = [] if not stops else ([] if vfork else [(name, 100, True, None)]) + (
        [(name, 200, False, None)] if expected_child is not None else [])
    assert tool.stops == expected
    assert (debug.tracer_of(child) is tool) == (expected_child is not None)
    if expected_child is not None:
        assert _as_sets(debug.event_mask(child)) == expected_child
    if vfork:
        _vfork_done(kernel, debug, parent, forking, child, tool, mask, process_mask)


def _vfork_done(kernel, debug, parent, forking, child, tool, mask, process_mask):
    """[0037]: the parent may not be continued before the child has exec'd or exited; then it
    logs its vfork event (if it responds to VFORK) and may be resumed."""
    kernel.scheduler.sleep(forking, [("vfork", child.pid)], "vfork child", None)
    try:
        debug.resume(forking)
        raise AssertionError("a vfork parent was resumed before its child was done")
    except VforkParentBusy as busy:
        assert (busy.parent_pid, busy.child_pid) == (100, 200)
    before = len(tool.stops)
    child.vfork_parent = None
    debug.vfork_done(parent, child)
    parent_stops = ref_responds(process_mask["events"], mask["events"], V)
    assert tool.stops[before:] == ([("vfork", 100, True, None)] if parent_stops else [])


@given(process_masks, st.lists(masks, min_size=1, max_size=3), st.data(), st.sampled_from(SIGNALS))
@example({"events": {S}, "options": set(), "passing": {10}}, [{"events": set(), "options": set()}],
         None, 10)
@example({"events": {S}, "options": set(), "passing": {12}}, [{"events": set(), "options": set()}],
         None, 10)
@example({"events": set(), "options": set(), "passing": set()}, [{"events": {S}, "options": set()}],
         None, 10)
@example({"events": set(), "options": set(), "passing": set()},          # the thread's own mask
         [{"events": {S}, "options": set(), "passing": {10}}], None, 10)
@example({"events": {S}, "options": set(), "passing": set()},            # not examined
         [{"events": {S}, "options": set(), "passing": {10}}], None, 10)
def test_a_signal_stops_the_thread_unless_its_mask_bit_is_set(process_mask, thread_masks, data, signal):
    index = data.draw(st.integers(0, len(thread_masks) - 1)) if data is not None else 0
    kernel, debug, parent, tool = _setup(process_mask, thread_masks)
    parent.sigactions[signal] = (SIG_IGN, 0, 0, 0)
    thread = parent.threads[index]
    kernel.signals.post(parent, signal, thread=thread)
    kernel.signals.deliver(thread)
    stops = ref_signal_stops(process_mask, thread_masks[index], signal)
    assert tool.stops == ([("signal", 100, False, signal)] if stops else [])
    # resumed with its signal, it was processed (here: ignored) without a second stop
    assert not (thread.pending_signals | parent.pending_signals)


@given(process_masks, masks)
def test_a_stopped_signal_waits_for_the_tracer_and_resume_decides(process_mask, thread_mask):
    process_mask = dict(process_mask, events=process_mask["events"] | {S}, passing=set())
    kernel, debug, parent, tool = _setup(process_mask, [thread_mask], resume_at_once=False)
    thread = parent.threads[0]
    parent.sigactions[10] = (SIG_IGN, 0, 0, 0)
    kernel.signals.post(parent, 10, thread=thread)
    kernel.signals.deliver(thread)
    assert tool.stops == [("signal", 100, False, 10)]
    assert debug.trace_stop_of(thread).signal == 10 and thread.state == "sleeping"
    debug.resume(thread, 10)
    assert thread.state == "runnable" and debug.trace_stop_of(thread) is None
    kernel.signals.deliver(thread)                  # the injected signal: no second stop
    assert tool.stops == [("signal", 100, False, 10)]
    assert not (thread.pending_signals | parent.pending_signals)
