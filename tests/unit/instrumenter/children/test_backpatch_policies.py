"""The children policies on the committed samples (both arches): vfork_status (child_work is
called by the parent before and after a vfork and by the vfork child) and fork_pipe (produce()
runs 1000 times in the parent and 1000 times in its fork child).

Memory is checked at the events themselves by observers on the debug interface: one subscribed
before the session (it sees the space before the monitor acts) and one after it (it sees what
the monitor left): the vfork child runs the uninstrumented image, and once it is gone the
shared space is byte-identical to the instrumented image before the vfork.
"""
import collections
import io
from pathlib import Path

import pytest

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

ROOT = Path(__file__).resolve().parents[4]
ARCHES = ("i386", "x86_64")
STRATEGIES = ("trampoline", "jump", "emulate", "emulate-lock", "singlestep")
VFORK_OUTPUT = (b"vfork child: exited 7\nchild_work calls seen by the parent: 3\n"
                b"vfork+execve child: exited 3\nvfork_status: ok\n")


class Text:
    """The executable mapping that holds `function`, read at any moment."""

    def __init__(self, proc, function: str):
        address = proc.image.symbols.lookup(function).addr
        vma = proc.vm.vma_at(address)
        self.start, self.size = vma.start, vma.end - vma.start

    def read(self, proc) -> bytes:
        return proc.machine.mem.read(self.start, self.size)


class Early:
    """Subscribed before the session: sees each event before the monitor acts on it."""

    def __init__(self, text):
        self.text, self.instrumented, self.during_child = text, None, []

    def pre_fork(self, parent, child_pid, vfork):
        self.instrumented = self.text.read(parent)

    def vfork_done(self, parent, child):
        self.during_child.append(self.text.read(parent))


class Late:
    """Subscribed after the session: sees what the monitor left."""

    def __init__(self, text):
        self.text, self.after, self.fork_children = text, [], []

    def vfork_done(self, parent, child):
        self.after.append(self.text.read(parent))

    def fork(self, parent, child):
        self.fork_children.append((self.text.read(parent), self.text.read(child)))


class AtExit:
    """Whether the patches of each process's space were backpatched when it exited (its
    space is released right after: the door's table of it is gone by the end of the run)."""

    def __init__(self, session):
        self.session, self.suspended = session, {}

    def exit(self, process, status):
        self.suspended[process.pid] = self.session.debug.is_backpatched(process)


def run_sample(arch, name, specs, function, *, strategy="auto", children="follow",
               backpatch="lazy", native=None, max_tasks=256):
    stdout = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO(), max_tasks=max_tasks))
    path = str(ROOT / "samples" / "bin" / arch / name)
    proc = kernel.spawn(path.encode(), [path.encode()], [])
    text = Text(proc, function)
    pristine = text.read(proc)
    early, late = Early(text), Late(text)
    kernel.debug.subscribe(early)
    records = []
    probes = [Probe(parse_probe_spec(s), native=native) for s in specs]
    session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy=strategy,
                      children=children, backpatch=backpatch)
    kernel.debug.subscribe(late)
    at_exit = AtExit(session)
    kernel.debug.subscribe(at_exit)
    session.attach(proc)
    status = kernel.run(proc)
    session.flush()
    counts = collections.Counter((r.pid, r.probe.rsplit(":", 1)[-1]) for r in records)
    return dict(status=status, stdout=stdout.data, counts=counts, monitor=session.monitor.reports,
                pristine=pristine, early=early, late=late, session=session, proc=proc,
                suspended_at_exit=at_exit.suspended)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("mode", ["lazy", "eager"])
def test_vfork_detach_child_runs_original_code_and_the_parent_misses_nothing(arch, strategy, mode):
    r = run_sample(arch, "vfork_status", ["uprobe:vfork_status:child_work"], "child_work",
                   strategy=strategy, children="detach", backpatch=mode)
    assert r["status"] == 0 and r["stdout"] == VFORK_OUTPUT
    assert r["counts"] == {(100, "child_work"): 2}             # parent: before and after
    early, late = r["early"], r["late"]
    assert early.instrumented != r["pristine"]
    # Child 101 called child_work (it was backpatched); child 102 only execs: under lazy it
    # never trapped, so its space stayed instrumented; eager backpatched it anyway.
    assert early.during_child[0] == r["pristine"]
    assert early.during_child[1] == (r["pristine"] if mode == "eager" else early.instrumented)
    assert late.after == [early.instrumented, early.instrumented]
    first = "first hit at" if mode == "lazy" else "(eager)"
    assert any("backpatched 1 sites" in line and first in line for line in r["monitor"])
    assert sum("re-inserted 1 sites" in line for line in r["monitor"]) == (1 if mode == "lazy" else 2)
    assert not any("prediction wrong" in line for line in r["monitor"])


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_vfork_follow_records_the_child_under_its_own_pid(arch, strategy):
    r = run_sample(arch, "vfork_status", ["uprobe:vfork_status:child_work"], "child_work",
                   strategy=strategy, children="follow")
    assert r["status"] == 0 and r["stdout"] == VFORK_OUTPUT
    assert r["counts"] == {(100, "child_work"): 2, (101, "child_work"): 1}
    assert r["early"].during_child[0] == r["early"].instrumented     # the patches stayed
    assert r["monitor"] == ["pre-fork pid 100 -> 101 (vfork)", "pre-fork pid 100 -> 102 (vfork)"]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("children", ["follow", "detach"])
def test_native_counts_follow_the_policy_across_a_vfork(arch, children):
    r = run_sample(arch, "vfork_status", ["uprobe:vfork_status:child_work"], "child_work",
                   strategy="jump", children=children, native="count")
    assert r["status"] == 0 and r["stdout"] == VFORK_OUTPUT
    per_pid = {pid: n for (_, pid), n in r["session"].jumps.natives.per_pid.items()}
    assert per_pid == ({100: 2, 101: 1} if children == "follow" else {100: 2})
    if children == "detach":       # a native part never traps: backpatched at the vfork itself
        assert any("native jump sites never trap" in line for line in r["monitor"])
        assert r["late"].after == [r["early"].instrumented] * 2


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["trampoline", "jump", "emulate-lock"])
@pytest.mark.parametrize("children", ["follow", "detach"])
def test_fork_children_inherit_or_lose_the_probes(arch, strategy, children):
    r = run_sample(arch, "fork_pipe", ["uprobe:fork_pipe:produce"], "produce",
                   strategy=strategy, children=children)
    assert r["status"] == 0
    expected = {(100, "produce"): 1000}
    if children == "follow":
        expected[(101, "produce")] = 1000
    assert r["counts"] == expected
    for parent_text, child_text in r["late"].fork_children:
        assert parent_text != r["pristine"]
        assert (child_text == r["pristine"]) == (children == "detach")
    if children == "detach":
        assert "fork pid 101: cleaned 1 sites (detach)" in r["monitor"]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_detached_fork_child_returns_past_a_pending_uretprobe(arch):
    """The parent's return address of fork() points into the tool's landing when the child is
    created; the detached child's copy of the stack gets the real one back."""
    r = run_sample(arch, "fork_pipe", ["uretprobe:fork_pipe:fork"], "produce",
                   strategy="trampoline", children="detach")
    assert r["status"] == 0
    assert r["counts"] == {(100, "fork"): 2}


@pytest.mark.parametrize("arch", ARCHES)
def test_a_failed_eager_vfork_is_reported_and_the_parent_is_instrumented_again(arch):
    """With room for one task only the vfork fails (EAGAIN) after the pre-fork event, which
    already backpatched the space: FIG. 5's wrong prediction, then re-insertion."""
    r = run_sample(arch, "vfork_status", ["uprobe:vfork_status:child_work"], "child_work",
                   strategy="trampoline", children="detach", backpatch="eager", max_tasks=1)
    assert r["status"] == 1 << 8                                 # fail("vfork"): exit 1
    assert r["monitor"] == [
        "pre-fork pid 100 -> 101 (vfork)",
        "pre-fork pid 100: backpatched 1 sites (eager)",
        "pre-fork prediction wrong: vfork of pid 100 failed (EAGAIN), no pid 101",
        "pid 100: re-inserted 1 sites after the failed vfork"]
    assert r["suspended_at_exit"] == {100: False}
    assert r["counts"] == {(100, "child_work"): 1}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("children", ["follow", "detach"])
def test_grandchildren_follow_the_policy_too(arch, children):
    """spawn_tree: the middle child forks two children of its own through fork_flushed()."""
    r = run_sample(arch, "spawn_tree", ["uprobe:spawn_tree:fork_flushed", "uprobe:spawn_tree:reap"],
                   "fork_flushed", strategy="trampoline", children=children)
    assert r["status"] == 0
    expected = {(100, "fork_flushed"): 3, (100, "reap"): 3}
    if children == "follow":
        expected.update({(102, "fork_flushed"): 2, (102, "reap"): 1})
    assert r["counts"] == expected
    assert sum("cleaned" in line for line in r["monitor"]) == (3 if children == "detach" else 0)
