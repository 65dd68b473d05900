"""The process monitor (US 7,185,320 FIG. 5): pre-fork predictions checked against what follows,
which processes are traced, and the dispatch of events and untraced traps to the policy.
Driven by the debug interface's events on stand-in processes (no guest runs here)."""
from types import SimpleNamespace

import pytest

from instrumenter.children.policies import ChildPolicy, make_policy
from instrumenter.errors import InstrumenterError
from instrumenter.children.monitor import ProcessMonitor
from kernel_model.debug import DebugInterface
from kernel_model.errno import EAGAIN


class Recorder(ChildPolicy):
    """Records the calls the monitor makes."""
    name = "recorder"

    def __init__(self, session, traces_children: bool):
        super().__init__(session)
        self.traces_children = traces_children
        self.calls = []

    def pre_fork(self, parent, prediction):
        self.calls.append(("pre_fork", parent.pid, prediction.child_pid, prediction.vfork))

    def on_fork(self, parent, child):
        self.calls.append(("fork", parent.pid, child.pid))

    def on_vfork(self, parent, child):
        self.calls.append(("vfork", parent.pid, child.pid))

    def on_vfork_done(self, parent, child):
        self.calls.append(("vfork_done", parent.pid, child.pid))

    def on_untraced_fork(self, parent, child):
        self.calls.append(("untraced_fork", parent.pid, child.pid))

    def on_failed(self, parent, prediction):
        self.calls.append(("failed", parent.pid, prediction.child_pid))

    def untraced_trap(self, handler, address, frame, thread):
        self.calls.append(("untraced", thread.process.pid, address))
        return False


def _monitor(traces_children: bool = True):
    debug = DebugInterface()
    session = SimpleNamespace(debug=debug, kernel=None)
    policy = Recorder(session, traces_children)
    monitor = ProcessMonitor(session, policy)
    return debug, monitor, policy


def _proc(pid: int):
    return SimpleNamespace(pid=pid, space=SimpleNamespace(serial=pid))


def test_a_confirmed_vfork_prediction_is_silent_and_the_child_is_traced_under_follow():
    debug, monitor, policy = _monitor()
    parent, child = _proc(1), _proc(2)
    monitor.trace(parent)
    debug.pre_fork(parent, 2, vfork=True)
    debug.vfork(parent, child)
    debug.vfork_done(parent, child)
    assert monitor.reports == ["pre-fork pid 1 -> 2 (vfork)"]
    assert policy.calls == [("pre_fork", 1, 2, True), ("vfork", 1, 2), ("vfork_done", 1, 2)]
    assert monitor.is_traced(child)


def test_a_child_with_another_pid_is_a_wrong_prediction():
    debug, monitor, _ = _monitor()
    parent = _proc(1)
    monitor.trace(parent)
    debug.pre_fork(parent, 5, vfork=True)
    debug.vfork(parent, _proc(6))
    assert monitor.reports[-1] == "pre-fork prediction wrong: expected pid 5, vfork child is pid 6"


def test_a_failed_vfork_is_a_wrong_prediction_and_the_policy_hears_of_it():
    debug, monitor, policy = _monitor()
    parent = _proc(1)
    monitor.trace(parent)
    debug.pre_fork(parent, 2, vfork=True)
    debug.fork_failed(parent, 2, EAGAIN)
    assert monitor.reports[-1] == "pre-fork prediction wrong: vfork of pid 1 failed (EAGAIN), no pid 2"
    assert policy.calls[-1] == ("failed", 1, 2)
    assert monitor.predictions == {}


def test_a_fork_announced_as_vfork_and_a_fork_without_announcement_are_reported():
    debug, monitor, _ = _monitor()
    parent = _proc(1)
    monitor.trace(parent)
    debug.pre_fork(parent, 2, vfork=False)
    debug.vfork(parent, _proc(2))
    debug.fork(parent, _proc(3))
    assert monitor.reports[1:] == [
        "pre-fork prediction wrong: announced a fork, pid 1 made a vfork (child pid 2)",
        "pre-fork prediction wrong: no pre-fork event before the fork of pid 1 (child pid 3)"]


def test_untraced_parents_are_not_monitored_and_detached_children_are_untraced():
    debug, monitor, policy = _monitor(traces_children=False)
    parent, child, grandchild = _proc(1), _proc(2), _proc(3)
    monitor.trace(parent)
    debug.pre_fork(parent, 2, vfork=False)
    debug.fork(parent, child)
    assert not monitor.is_traced(child)
    debug.pre_fork(child, 3, vfork=False)
    debug.fork(child, grandchild)
    debug.pre_fork(child, 4, vfork=True)
    debug.vfork(child, _proc(4))
    # The untraced child's own fork goes to the policy (its memory may still hold patches).
    assert policy.calls == [("pre_fork", 1, 2, False), ("fork", 1, 2), ("untraced_fork", 2, 3)]
    assert monitor.reports == ["pre-fork pid 1 -> 2 (fork)"]


def test_the_gate_sends_traced_traps_to_the_handler_and_untraced_ones_to_the_policy():
    debug, monitor, policy = _monitor()
    parent, child = _proc(1), _proc(2)
    monitor.trace(parent)
    space = parent.space
    hits = []
    debug.register_breakpoint(space, 0x1000, lambda frame, thread: hits.append(thread) or True)
    debug.set_gate(space, monitor.gate)
    handler = debug.breakpoint_at(space, 0x1000)
    parent_thread = SimpleNamespace(process=parent)
    assert handler("frame", parent_thread) is True and hits == [parent_thread]
    assert handler("frame", SimpleNamespace(process=child)) is False
    assert policy.calls[-1] == ("untraced", 2, 0x1000)
    debug.clear_gate(space)
    assert debug.breakpoint_at(space, 0x1000)("frame", SimpleNamespace(process=child)) is True


def test_exit_forgets_the_process():
    debug, monitor, _ = _monitor()
    parent = _proc(1)
    monitor.trace(parent)
    debug.pre_fork(parent, 2, vfork=True)
    debug.exit(parent, 0)
    assert not monitor.is_traced(parent) and monitor.predictions == {}


def test_unknown_policies_and_modes_are_one_line_errors():
    session = SimpleNamespace(debug=DebugInterface(), kernel=None)
    with pytest.raises(InstrumenterError, match="unknown children policy 'adopt'"):
        make_policy(session, "adopt")
    with pytest.raises(InstrumenterError, match="unknown backpatch mode 'later'"):
        make_policy(session, "detach", "later")


def test_the_naive_tool_says_what_it_waits_for_only_once_a_vfork_happened():
    debug = DebugInterface()
    session = SimpleNamespace(debug=debug, kernel=None)
    monitor = ProcessMonitor(session, make_policy(session, "naive"))
    parent = _proc(7)
    monitor.trace(parent)
    assert debug.tool_waits() == []
    debug.pre_fork(parent, 8, vfork=True)
    debug.vfork(parent, _proc(8))
    assert debug.tool_waits() == [
        "trapline (naive monitor) waiting for trace events from the parent pid 7 only"]
