"""Placing and removing probes at random points during a run never changes the program's
output (issue 4): probes on `produce` in fork_pipe are toggled at random syscalls of the run."""
import io

import pytest

from hypothesis import given, settings, strategies as st

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session, _EntryHit
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

from ..samples.test_samples_run import SAMPLES

pytestmark = pytest.mark.e2e
EXPECTED = (SAMPLES.parent / "expected" / "fork_pipe.out").read_bytes()


class Toggler:
    """A syscall watcher that places or removes the probe at chosen syscall numbers."""

    def __init__(self, session, probe, toggles: set[int]):
        self.session, self.probe, self.toggles = session, probe, toggles
        self.count = 0
        self.placed: dict = {}          # space.serial -> (process, address, hook)

    def syscall_entry(self, thread, name, args):
        self.count += 1
        if self.count not in self.toggles or thread.process.image is None:
            return
        process = thread.process
        key = process.space.serial
        if key in self.placed:
            proc, address, hook = self.placed.pop(key)
            self.session.trampolines.remove(proc, address, hook, self.probe.spec.text)
        else:
            address = self.session.resolve(process, self.probe)
            hook = _EntryHit(self.session, self.probe)
            self.session.trampolines.place(process, address, hook, self.probe.spec.text)
            self.placed[key] = (process, address, hook)

    def syscall_exit(self, thread, name, args, result):
        pass


def run_fork_pipe(arch: str, toggles: set[int]):
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO()))
    proc = kernel.spawn(str(SAMPLES / arch / "fork_pipe").encode(), [b"fork_pipe"], [])
    probe = Probe(parse_probe_spec("uprobe:fork_pipe:produce"))
    session = Session(kernel, [], buffers=Buffers(), strategy="trampoline")
    session.attach(proc)         # the tool traces the process (its fork children follow)
    toggler = Toggler(session, probe, toggles)
    kernel.debug.syscall_watchers.append(toggler)
    status = kernel.run(proc)
    return status, stdout.data, probe.hits


@settings(max_examples=6, deadline=None)      # each run executes 2000+ syscalls in two processes
@given(arch=st.sampled_from(["i386", "x86_64"]),
       toggles=st.sets(st.integers(min_value=1, max_value=1200), max_size=8))
def test_toggling_probes_during_a_run_keeps_the_output(arch, toggles):
    status, out, hits = run_fork_pipe(arch, toggles)
    assert status == 0
    assert out == EXPECTED
    assert 0 <= hits <= 2000
    if not toggles:
        assert hits == 0


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_probe_placed_at_the_start_and_never_removed_sees_every_call(arch):
    """The writer child calls produce() for its 1000 lines and the parent 1000 more to check
    them: the child inherits the probe with its copy of the memory (fork follows)."""
    status, out, hits = run_fork_pipe(arch, {1})
    assert (status, out, hits) == (0, EXPECTED, 2000)
