"""What the kernel offers a tool for US 7,185,320: the pre-fork event before anything can fail and a
fork_failed event after it, gates on shared spaces, tracer stops, and a deadlock report that
names every waiter — threads stopped for their tracer and the tools that wait too."""
import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernel_model.debug import DebugInterface
from kernel_model.errno import EAGAIN
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Deadlock, Kernel, KernelConfig
from kernel_model.process.proc import Thread

ROOT = Path(__file__).resolve().parents[5]


class Events:
    def __init__(self):
        self.seen = []

    def pre_fork(self, parent, child_pid, vfork):
        self.seen.append(("pre_fork", parent.pid, child_pid, vfork))

    def fork_failed(self, parent, child_pid, errno):
        self.seen.append(("fork_failed", parent.pid, child_pid, errno))

    def vfork(self, parent, child):
        self.seen.append(("vfork", parent.pid, child.pid))

    def vfork_done(self, parent, child):
        self.seen.append(("vfork_done", parent.pid, child.pid))


def _kernel(arch: str, **config):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO(), **config))
    path = str(ROOT / "samples" / "bin" / arch / "vfork_status").encode()
    return kernel, kernel.spawn(path, [path], [])


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_vfork_events_in_order(arch):
    kernel, proc = _kernel(arch)
    events = Events()
    kernel.debug.subscribe(events)
    assert kernel.run(proc) == 0
    assert events.seen == [("pre_fork", 100, 101, True), ("vfork", 100, 101), ("vfork_done", 100, 101),
                           ("pre_fork", 100, 102, True), ("vfork", 100, 102), ("vfork_done", 100, 102)]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_vfork_refused_by_the_task_limit_comes_after_its_pre_fork_event(arch):
    kernel, proc = _kernel(arch, max_tasks=1)
    events = Events()
    kernel.debug.subscribe(events)
    assert kernel.run(proc) == 1 << 8                        # the sample's fail("vfork")
    assert events.seen == [("pre_fork", 100, 101, True), ("fork_failed", 100, 101, EAGAIN)]
    assert kernel.peek_next_pid() == 101                     # the announced pid stays free


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_thread_stopped_for_its_tracer_is_named_in_the_deadlock_report(arch):
    """A tool with an int3 at _exit that stops whoever traps there and never resumes it: the
    vfork child traps first (the parent sleeps until it is gone), and the tool says what it
    waits for."""
    kernel, proc = _kernel(arch)
    address = proc.image.symbols.lookup("_exit").addr

    class Tool:
        stopped = None

        def on_breakpoint(self, frame, thread):
            self.stopped = thread
            kernel.debug.stop_for_tracer(thread, f"at breakpoint {address:#x}, waiting for its tracer")
            frame.ip = address
            return False

        def waits_for(self):
            return "test tool waiting for nothing" if self.stopped else None

    tool = Tool()
    kernel.debug.register_tracer(tool)
    kernel.debug.register_breakpoint(proc.space, address, tool.on_breakpoint)
    kernel.debug.write_memory(proc, address, b"\xcc")
    with pytest.raises(Deadlock) as info:
        kernel.run(proc)
    assert tool.stopped.process.pid == 101
    lines = str(info.value).splitlines()
    assert lines[0] == "deadlock: nothing can run"
    assert lines[1].endswith("sleeping, waiting for vfork child 101 to exec or exit")
    assert lines[2].startswith("  pid 101 tid 101 (")
    assert lines[2].endswith(f"stopped at breakpoint {address:#x}, waiting for its tracer")
    assert lines[3] == "  tool: test tool waiting for nothing"


def test_resume_from_tracer_makes_the_thread_runnable_again():
    kernel = Kernel(KernelConfig(report=io.StringIO()))
    thread = Thread(tid=5, process=SimpleNamespace(pid=5, machine=None), kstack_top=0)
    kernel.scheduler.add(thread)
    kernel.debug.stop_for_tracer(thread, "at breakpoint 0x1000, waiting for its tracer")
    assert thread.state == "sleeping" and not kernel.scheduler.runnable()
    kernel.wakeup(("pipe", 1))                               # another channel: still stopped
    assert thread.state == "sleeping"
    kernel.debug.resume_from_tracer(thread)
    assert kernel.scheduler.runnable() == [thread]


def test_clear_space_forgets_every_handler_and_gate_of_that_space_only():
    debug = DebugInterface()
    machine = SimpleNamespace(trap_lock_prefix=lambda a: None, untrap_lock_prefix=lambda a: None)
    kept, dropped = SimpleNamespace(machine=machine, serial=1), SimpleNamespace(machine=machine, serial=2)
    for space in (kept, dropped):
        debug.register_breakpoint(space, 0x10, lambda f, t: True)
        debug.register_invalid_opcode_site(space, 0x20, lambda f, t: True)
        debug.register_debug_trap(space, lambda f, t: True)
        debug.set_gate(space, lambda handler, address, frame, thread: handler(frame, thread))
    debug.clear_space(dropped)
    assert debug.breakpoint_at(dropped, 0x10) is None
    assert debug.invalid_opcode_site(dropped, 0x20) is None
    assert debug.debug_trap_handler(dropped) is None
    assert debug.breakpoint_at(kept, 0x10) is not None and debug.invalid_opcode_site(kept, 0x20) is not None
