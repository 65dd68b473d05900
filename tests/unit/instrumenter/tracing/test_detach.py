"""The pieces of a detach (instrumenter/tracing/detach*.py) on real samples: a thread caught in
a trampoline is moved to the original instruction, uretprobe landings on the stack are found by
unwinding and reset, and a stale pointer into the unmapped trampoline page is translated on the
fault and reported."""
import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.kernel import wait_status_exit_code
from tests.property.detach_harness import SAMPLES, _kernel, detach_run, unprobed
from trapline.probespec import parse_probe_spec


def _fib_session(arch, probes, strategy="trampoline"):
    kernel, stdout = _kernel(1000)
    path = str(SAMPLES / arch / "fib").encode()
    proc = kernel.spawn(path, [path, b"9"], [])
    session = Session(kernel, probes, buffers=Buffers(drain=lambda records: None), strategy=strategy)
    session.attach(proc)
    return kernel, stdout, proc, session


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_thread_sent_to_the_trampoline_is_moved_back_to_the_original_instruction(arch):
    """Detach asked from the probe's action: at the next safe point the thread is at the
    trampoline's first byte (the handler rewrote its IP), the probed instruction not run."""
    seen = {}

    def action(context):
        seen["report"] = session.detach()
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=0, action=action)
    kernel, stdout, proc, session = _fib_session(arch, [probe])
    fib = session.resolve(proc, probe)
    status = kernel.run(proc)
    report = seen["report"]
    assert report.done and probe.hits == 1
    assert [(m.original, m.how) for m in report.moved] == [(fib, "exact")]
    assert (wait_status_exit_code(status), stdout.data) == unprobed(arch, "fib", (b"9",), 1000)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_landings_on_the_stack_are_found_by_unwinding_and_reset(arch):
    """Deep in fib's recursion every frame returns through the landing: the walk up the
    frame-pointer chain finds each slot and gives it the real return address back."""
    run = detach_run(arch, "fib", (b"9",), ["uretprobe:fib:fib"], "trampoline", 1500, 1000)
    assert run.report.done and run.problems == []
    found = [r for r in run.report.rewritten if r.found_by == "unwinding"]
    assert len(found) >= 3
    assert len({r.tool for r in found}) == 1                 # the one landing
    assert all(r.original != r.tool for r in found)
    assert (run.exit_code, run.stdout) == unprobed(arch, "fib", (b"9",), 1000)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_stale_pointer_into_the_unmapped_trampoline_is_translated_and_reported(arch):
    state = {}

    def action(context):
        state.setdefault("report", session.detach(on_done=stale_jump))

    def stale_jump(report):
        """The program 'kept' the trampoline's address: it jumps there after the detach."""
        thread = kernel.debug.current_thread()
        pc_name = kernel.debug.arch(proc).pc
        moved = report.moved[0]
        kernel.debug.write_register(thread, pc_name, moved.tool)
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=0, action=action)
    kernel, stdout, proc, session = _fib_session(arch, [probe])
    status = kernel.run(proc)
    report = state["report"]
    moved = report.moved[0]
    assert report.stale == [(proc.pid, moved.tool, moved.original)]
    assert (wait_status_exit_code(status), stdout.data) == unprobed(arch, "fib", (b"9",), 1000)


def test_a_session_detaches_once():
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=0)
    kernel, _, proc, session = _fib_session("x86_64", [probe])
    session.detach()
    with pytest.raises(InstrumenterError, match="detached already"):
        session.detach()


def test_a_detach_that_must_wait_restores_the_text_at_once_and_finishes_later(monkeypatch):
    """A thread that cannot be moved out of tool code yet (asleep in a handler's system call)
    makes the detach wait: the probes are off and the text is restored at once, the rest is
    done at a later safe point (RETRY instructions on)."""
    from instrumenter.tracing import detach as detach_module
    from instrumenter.tracing.detach_threads import ThreadMover
    settle = ThreadMover.settle
    calls = []

    def stuck_once(self, process):
        calls.append(process.pid)
        if len(calls) == 1:
            return [], [f"tid {process.pid} pretends to sleep in tool code"]
        return settle(self, process)
    monkeypatch.setattr(ThreadMover, "settle", stuck_once)
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=0)
    kernel, stdout, proc, session = _fib_session("x86_64", [probe])
    fib = session.resolve(proc, probe)
    seen = {}

    def detach():
        seen["report"] = report = session.detach(at_once=True)
        seen["waiting"] = list(report.waiting)
        seen["byte"] = kernel.debug.read_memory_raw(proc, fib, 1)
        seen["original"] = kernel.debug.read_memory(proc, fib, 1)
        seen["hits"] = probe.hits
    kernel.debug.at_instruction(1000, detach)
    status = kernel.run(proc)
    report = seen["report"]
    assert seen["waiting"] == ["tid 100 pretends to sleep in tool code"]
    assert seen["byte"] == seen["original"] != b"\xcc"                      # restored at once
    assert report.done and report.done_at >= report.requested_at + detach_module.RETRY
    assert probe.hits == seen["hits"]                                      # nothing after it
    assert (wait_status_exit_code(status), stdout.data) == unprobed("x86_64", "fib", (b"9",), 1000)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_vfork_parent_asleep_with_a_landing_on_the_shared_stack_is_cleaned_too(arch):
    """Detach from the vfork child's first call of leaf: the parent sleeps in vfork, its frame
    of vfork_work_exit returning through the landing, on the stack the child runs on."""
    from tests.property.detach_harness import leftovers
    state = {}
    kernel, stdout = _kernel(1000)
    path = str(SAMPLES / arch / "vfork_probe").encode()
    proc = kernel.spawn(path, [path], [])

    def action(context):
        if context.pid != proc.pid and "report" not in state:
            state["report"] = session.detach(on_done=done)

    def done(report):
        state["asleep"] = [t.tid for t in kernel.debug.live_threads(proc)
                           if not kernel.debug.thread_can_step(t)]
        state["problems"] = leftovers(kernel, report)
    probes = [Probe(parse_probe_spec("uretprobe:vfork_probe:vfork_work_exit"), nargs=0),
              Probe(parse_probe_spec("uprobe:vfork_probe:leaf"), nargs=0, action=action)]
    session = Session(kernel, probes, buffers=Buffers(drain=lambda records: None),
                      strategy="trampoline")
    session.attach(proc)
    status = kernel.run(proc)
    report = state["report"]
    assert state["asleep"] == [proc.pid] and state["problems"] == []
    landing_slots = [r for r in report.rewritten if r.original != r.tool]
    assert landing_slots, report.rewritten
    assert (wait_status_exit_code(status), stdout.data) == unprobed(arch, "vfork_probe", (), 1000)
