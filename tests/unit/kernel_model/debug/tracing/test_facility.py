"""The tracing facility of the debug interface (US 7,185,320 [0034]-[0037]) on whole guest runs:
fork and vfork stops on both sides, the vfork parent that may not be resumed early, inheritance
of the masks, untraced children, signal stops with delivery or suppression and the per-signal
pass mask, stops a tool asks for (of a running and of a sleeping thread), and the errors the
tool gets back."""
import io
from pathlib import Path

import pytest

from kernel_model.debug import TraceError, TraceEvent, TraceOption, VforkParentBusy
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Deadlock, Kernel, KernelConfig
from kernel_model.signals import SIGALRM, SIGSEGV, SIGUSR1, SIGUSR2

ROOT = Path(__file__).resolve().parents[5]
EXPECTED = ROOT / "samples" / "expected"


def _kernel(arch: str, sample: str):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / arch / sample).encode()
    return kernel, kernel.spawn(path, [path], [])


def _stdout(kernel) -> bytes:
    return kernel.config.stdout.data


class Tracer:
    """Logs every stop as (event, pid, other pid, is_parent, signal) and resumes at once,
    with the stop's own signal, unless told to keep some."""

    def __init__(self, debug, *, keep=lambda stop: False, signal_of=lambda stop: stop.signal):
        self.debug, self.keep, self.signal_of = debug, keep, signal_of
        self.log, self.kept, self.exits = [], [], []

    def trace_stop(self, stop):
        self.log.append((stop.event, stop.pid, stop.other_pid, stop.is_parent, stop.signal))
        assert self.debug.trace_stop_of(stop.thread) is stop
        if self.keep(stop):
            self.kept.append(stop)
        else:
            self.debug.resume(stop.thread, self.signal_of(stop))

    def trace_exit(self, pid, status):
        self.exits.append((pid, status))


def test_fork_stops_the_parent_and_the_child_and_both_log_it(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.FORK | TraceEvent.EXIT)
    assert kernel.run(proc) == 0
    assert _stdout(kernel) == (EXPECTED / "fork_probe.out").read_bytes()
    assert tracer.log == [("fork", 100, 101, True, None), ("fork", 101, 100, False, None),
                          ("exit", 100, None, False, None)]     # stopped at exit_group, then
    assert tracer.exits == [(100, 0)]          # gone; the child was traced with an empty mask


def test_with_the_inherit_option_the_child_gets_the_parents_mask(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    masks = {}

    class Inspect(Tracer):
        def trace_stop(self, stop):
            masks[stop.pid] = self.debug.event_mask(stop.thread.process)
            super().trace_stop(stop)
    tracer = Inspect(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.FORK | TraceEvent.EXIT, TraceOption.INHERIT)
    kernel.debug.set_signal_mask(proc, [SIGUSR2])
    assert kernel.run(proc) == 0
    assert masks[101] == masks[100]
    assert masks[101].signals == 1 << (SIGUSR2 - 1)
    assert sorted(tracer.exits) == [(100, 0), (101, 9 << 8)]


def test_untraced_children_option_leaves_the_child_alone(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.FORK, TraceOption.UNTRACED_CHILDREN | TraceOption.INHERIT)
    assert kernel.run(proc) == 0
    assert tracer.log == [("fork", 100, 101, True, None)]


def test_a_fork_stop_nobody_resumes_is_a_deadlock_naming_both_threads(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    tracer = Tracer(kernel.debug, keep=lambda stop: True)
    kernel.debug.attach(proc, tracer, TraceEvent.FORK)
    with pytest.raises(Deadlock) as info:
        kernel.run(proc)
    lines = [line.strip() for line in str(info.value).splitlines()]
    assert lines[1].startswith("pid 100 tid 100 (") and lines[1].endswith(
        "stopped at its fork event (child pid 101), waiting for its tracer")
    assert lines[2].endswith("stopped at the fork event of pid 100 (its parent), waiting for its tracer")


def test_vfork_stops_the_child_at_once_and_the_parent_at_vfork_done(arch):
    kernel, proc = _kernel(arch, "vfork_status")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.VFORK)
    assert kernel.run(proc) == 0
    assert _stdout(kernel) == (EXPECTED / "vfork_status.out").read_bytes()
    assert tracer.log == [("vfork", 101, 100, False, None), ("vfork", 100, 101, True, None),
                          ("vfork", 102, 100, False, None), ("vfork", 100, 102, True, None)]


def test_resuming_a_vfork_parent_before_its_child_is_done_is_an_error(arch):
    kernel, proc = _kernel(arch, "vfork_status")
    errors = []

    class Eager(Tracer):
        def trace_stop(self, stop):
            if not stop.is_parent:
                parent = kernel.processes[stop.other_pid].threads[0]
                with pytest.raises(VforkParentBusy) as info:
                    self.debug.resume(parent)
                errors.append(str(info.value))
            super().trace_stop(stop)
    kernel.debug.attach(proc, Eager(kernel.debug), TraceEvent.VFORK)
    assert kernel.run(proc) == 0
    assert errors[0] == ("pid 100 tid 100 is a vfork parent: its child pid 101 has not exec'd "
                         "or exited, so it cannot be resumed")
    assert len(errors) == 2


def test_signal_stops_resumed_with_their_signal_change_nothing(arch):
    kernel, proc = _kernel(arch, "signals")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.SIGNAL)
    assert kernel.run(proc) == 0
    assert _stdout(kernel) == (EXPECTED / "signals.out").read_bytes()
    signals = [entry[4] for entry in tracer.log]
    assert signals == [SIGUSR1, SIGALRM, SIGALRM, SIGSEGV, SIGUSR2, SIGUSR1]


def test_signals_in_the_pass_mask_are_processed_as_if_untraced(arch):
    kernel, proc = _kernel(arch, "signals")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.SIGNAL)
    kernel.debug.set_signal_mask(proc, [SIGALRM, SIGSEGV, SIGUSR2])
    assert kernel.run(proc) == 0
    assert [entry[4] for entry in tracer.log] == [SIGUSR1, SIGUSR1]


def test_a_signal_the_tracer_resumes_without_is_suppressed(arch):
    kernel, proc = _kernel(arch, "signals")
    tracer = Tracer(kernel.debug, signal_of=lambda stop: None)
    kernel.debug.attach(proc, tracer, TraceEvent.SIGNAL)
    assert kernel.run(proc) == 1 << 8                 # the sample's check of (a) fails
    assert [entry[4] for entry in tracer.log] == [SIGUSR1]
    assert b"SA_SIGINFO handler saw SIGUSR1" in kernel.config.stderr.data


def test_a_thread_mask_matters_only_while_the_process_flag_is_unset(arch):
    kernel, proc = _kernel(arch, "signals")
    tracer = Tracer(kernel.debug)
    debug = kernel.debug
    debug.attach(proc, tracer)
    debug.set_event_mask(proc.threads[0], TraceEvent.SIGNAL)
    assert debug.responds(proc.threads[0], TraceEvent.SIGNAL)
    debug.set_event_mask(proc, TraceEvent.FORK)
    assert debug.responds(proc.threads[0], TraceEvent.SIGNAL)      # the thread's own flag
    debug.set_event_mask(proc.threads[0], TraceEvent.NONE)
    assert not debug.responds(proc.threads[0], TraceEvent.SIGNAL)
    debug.set_event_mask(proc, TraceEvent.SIGNAL)
    assert debug.responds(proc.threads[0], TraceEvent.SIGNAL)      # the process's, whatever the thread says
    assert kernel.run(proc) == 0
    assert len(tracer.log) == 6


def test_a_tool_stops_a_running_thread_and_resumes_it_later(arch):
    """The tool stops the fork child when it is created (a plain fork notification) and
    resumes it when the parent calls wait4: the child then runs to its end."""
    kernel, proc = _kernel(arch, "fork_probe")
    debug = kernel.debug
    tracer = Tracer(debug, keep=lambda stop: True)
    debug.attach(proc, tracer, TraceEvent.NONE)

    class Tool:
        child = None

        def fork(self, parent, child):
            debug.attach(child, tracer)
            self.child = child.threads[0]
            assert debug.stop(self.child).event == "stop"
            assert debug.stop(self.child) is tracer.kept[0]        # already stopped: the same stop

        def syscall_entry(self, thread, name, args):
            if name.startswith("wait") and debug.trace_stop_of(self.child) is not None:
                debug.resume(self.child)
                with pytest.raises(TraceError, match="tid 101 is not stopped"):
                    debug.resume(self.child)

        def syscall_exit(self, thread, name, args, result):
            pass
    tool = Tool()
    debug.subscribe(tool, events=("fork",))
    debug.syscall_watchers.append(tool)
    assert kernel.run(proc) == 0
    assert _stdout(kernel) == (EXPECTED / "fork_probe.out").read_bytes()
    assert tracer.log == [("stop", 101, None, False, None)]


def test_a_sleeping_thread_stopped_by_the_tool_does_not_run_until_resumed(arch):
    """The parent sleeps in wait4 when the tool stops it; the child's exit wakes it, but it
    stays stopped (the deadlock report says so) until resumed."""
    kernel, proc = _kernel(arch, "fork_probe")
    debug = kernel.debug
    tracer = Tracer(debug, keep=lambda stop: True)
    debug.attach(proc, tracer)
    parent = proc.threads[0]

    class Tool:
        def syscall_entry(self, thread, name, args):
            if thread.process is not proc and name in ("write", "writev") and not tracer.kept:
                assert parent.blocked_call is not None           # asleep in wait4
                debug.stop(parent)

        def syscall_exit(self, thread, name, args, result):
            pass
    debug.syscall_watchers.append(Tool())
    with pytest.raises(Deadlock) as info:
        kernel.run(proc)
    assert "pid 100 tid 100" in str(info.value)
    assert "stopped on its tracer's request, waiting for its tracer" in str(info.value)
    debug.resume(parent)
    assert kernel.run(proc) == 0
    assert _stdout(kernel) == (EXPECTED / "fork_probe.out").read_bytes()


def test_requests_the_facility_refuses(arch):
    kernel, proc = _kernel(arch, "hello")
    debug = kernel.debug
    with pytest.raises(TraceError, match="pid 100 is not traced"):
        debug.set_event_mask(proc, TraceEvent.FORK)
    with pytest.raises(TraceError, match="pid 100 is not traced"):
        debug.stop(proc.threads[0])
    debug.attach(proc, Tracer(debug))
    with pytest.raises(TraceError, match="already traced by another tool"):
        debug.attach(proc, Tracer(debug))
    with pytest.raises(TraceError, match="no signal 65"):
        debug.set_signal_mask(proc, [65])
    with pytest.raises(TraceError, match="tid 100 is not stopped"):
        debug.resume(proc.threads[0])
    with pytest.raises(Exception, match="no debug event 'forks'"):
        debug.subscribe(object(), events=("forks",))


def test_exec_stops_at_the_new_image_and_children_inherit_the_flags(arch):
    """vfork_status's second vfork child execs the program: with INHERIT it responds to EXEC
    as its parent does, and stops at the new entry. (A tracer may be detached and another
    attached.)"""
    kernel, proc = _kernel(arch, "vfork_status")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.VFORK | TraceEvent.EXEC, TraceOption.INHERIT)
    entries = []

    class AtExec(Tracer):
        def trace_stop(self, stop):
            if stop.event == "exec":
                entries.append(kernel.debug.read_register(stop.thread, kernel.debug.arch(proc).pc))
            tracer.trace_stop(stop)
    kernel.debug.detach(proc)
    kernel.debug.attach(proc, AtExec(kernel.debug), TraceEvent.VFORK | TraceEvent.EXEC, TraceOption.INHERIT)
    assert kernel.run(proc) == 0
    assert tracer.log == [("vfork", 101, 100, False, None), ("vfork", 100, 101, True, None),
                          ("vfork", 102, 100, False, None), ("vfork", 100, 102, True, None),
                          ("exec", 102, None, False, None)]      # exec's commit ends the vfork first
    assert entries == [proc.image.entry]


def _stop_child_then_signal_it(kernel, proc, signal):
    """The tool stops fork_probe's child when it is created; when the parent enters wait4 it
    sends the child `signal`."""
    debug = kernel.debug
    tracer = Tracer(debug, keep=lambda stop: True)
    debug.attach(proc, tracer)
    child = {}

    class Tool:
        def fork(self, parent, new):
            debug.attach(new, tracer)
            child["thread"] = new.threads[0]
            debug.stop(new.threads[0])

        def syscall_entry(self, thread, name, args):
            if name.startswith("wait") and "sent" not in child:
                child["sent"] = True
                kernel.signals.post(child["thread"].process, signal)

        def syscall_exit(self, thread, name, args, result):
            pass
    tool = Tool()
    debug.subscribe(tool, events=("fork",))
    debug.syscall_watchers.append(tool)
    return child


def test_a_signal_that_arrives_during_a_stop_waits_for_the_resume(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    child = _stop_child_then_signal_it(kernel, proc, SIGUSR2)
    with pytest.raises(Deadlock):                    # the child stays stopped, SIGUSR2 pending
        kernel.run(proc)
    thread = child["thread"]
    assert kernel.debug.trace_stop_of(thread).event == "stop"
    assert thread.process.pending_signals == 1 << (SIGUSR2 - 1)
    kernel.debug.resume(thread)
    assert kernel.run(proc) == 1 << 8                # the parent's check: the child died of SIGUSR2
    assert kernel.config.stderr.data == b"fork_probe: child status %#x, expected exit 9\n" % SIGUSR2


def test_sigkill_ends_a_stop(arch):
    kernel, proc = _kernel(arch, "fork_probe")
    child = _stop_child_then_signal_it(kernel, proc, 9)
    assert kernel.run(proc) == 1 << 8                # no deadlock: the child was killed
    assert kernel.config.stderr.data == b"fork_probe: child status 0x9, expected exit 9\n"
    assert kernel.debug.trace_stop_of(child["thread"]) is None
