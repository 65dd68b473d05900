"""The profiler's stacks against gdb's (issue 18: "the samples' stacks agree with gdb's `bt` at
the same instruction count"): a sample's time is the number of guest instructions run before
it, so Debian's gdb, driving `trapline gdbserver --stdio` on the same program, steps exactly
that many instructions (`stepi N`) and prints its backtrace; the frames must be the sample's,
address for address, from the interrupted PC out to `_start`. Both arches."""
import re

import pytest

from trapline import Sandbox
from trapline.profile.session import run_profiled

from ..gdb_batch import gdb_batch, sample
from ..gdb_client import REPO

pytestmark = pytest.mark.e2e

FRAME = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?(\S+) \(", re.M)


def _deep_samples(arch: str, count: int):
    """The first `count` samples with the hot leaf under four callers, in time order. The run
    is the stub's: same program path, arguments, working directory and environment, so the
    same instruction counts."""
    run = run_profiled(Sandbox(cwd=str(REPO)), [sample(arch, "callchain"), "3"], interval=2003)
    deep = [s for s in run.profile.samples if not s.truncated and len(s.frames) >= 6]
    assert len(deep) >= count
    return deep[:count]


def _backtraces(text: str) -> list[list[tuple[int, str]]]:
    """Each `bt` of gdb's output as [(address, function), ...], frame 0 first."""
    traces: list[list] = []
    for number, address, function in FRAME.findall(text):
        if number == "0":
            traces.append([])
        traces[-1].append((int(address, 16) if address else None, function))
    return traces


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sample_stacks_are_gdbs_backtraces_at_the_same_instruction(arch):
    samples = _deep_samples(arch, 2)
    commands, at = ["set backtrace past-main on", "set backtrace past-entry on"], 0
    for s in samples:
        commands += [f"stepi {s.ts - at}", "p/x $pc", "bt"]
        at = s.ts
    text = gdb_batch(sample(arch, "callchain"), commands, args=["3"])
    traces = _backtraces(text)
    pcs = [int(pc, 16) for pc in re.findall(r"^\$\d+ = (0x[0-9a-f]+)", text, re.M)]
    assert len(traces) == len(samples) == len(pcs), text[-3000:]
    for s, trace, pc in zip(samples, traces, pcs):
        ours = [(f.address, f.name) for f in s.frames]
        theirs = [(address if address is not None else pc, name) for address, name in trace]
        names = [name for _, name in theirs]
        # past the entry gdb goes on reading the stack above _start (argc, argv: "??" frames);
        # the profiler stops at _start, the outermost frame
        theirs = theirs[:names.index("_start") + 1] if "_start" in names else theirs
        assert ours[0][0] == pc and theirs == ours, (ours, theirs)
        assert {"middle", "outer", "main"} <= {name for _, name in ours}     # deep in the chain
