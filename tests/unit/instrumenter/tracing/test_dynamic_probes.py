"""Probes added and removed while the program runs (instrumenter/tracing/dynamic.py): from the
library, from a probe's action, at instruction counts; clear errors for a probe the session
does not have or removes twice; a trampoline is reused only once no thread can run it."""
import io
from pathlib import Path

import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

BIN = Path(__file__).resolve().parents[4] / "samples" / "bin"


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _session(arch, program, args, specs, *, quantum=200_000, strategy="trampoline"):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO(), quantum=quantum))
    path = str(BIN / arch / program).encode()
    proc = kernel.spawn(path, [path, *args], [])
    probes = [Probe(parse_probe_spec(s), nargs=0) for s in specs]
    records = []
    session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy=strategy)
    session.attach(proc)
    return kernel, proc, session, probes, records


def test_removing_a_probe_never_added_or_twice_is_a_clear_error(arch):
    kernel, proc, session, (probe,), _ = _session(arch, "fib", [b"5"], ["uprobe:fib:fib"])
    stranger = Probe(parse_probe_spec("uprobe:fib:fib"))
    with pytest.raises(InstrumenterError, match="no such probe in this session"):
        session.remove_probe(stranger)
    session.remove_probe(probe)
    with pytest.raises(InstrumenterError, match="removed already"):
        session.remove_probe(probe)
    with pytest.raises(InstrumenterError, match="already enabled"):
        session.add_probe(session.add_probe(stranger))
    kernel.run(proc)
    assert (probe.hits, stranger.hits) == (0, 15)            # fib(5): 2*F(6)-1 calls


def test_a_probe_removed_by_its_own_action_and_readded_by_another_probe(arch):
    """fib's entry disables itself at its 3rd hit; a probe on fib+1 (the next instruction)
    enables it again at its 10th hit: the entry probe then sees every call after that one."""
    kernel, proc, session, (entry, inner), records = _session(
        arch, "fib", [b"8"], ["uprobe:fib:fib", "uprobe:fib:fib+1"])
    times = {}

    def entry_action(ctx):
        if entry.hits == 3:
            times["removed"] = ctx.timestamp
            session.remove_probe(entry)

    def inner_action(ctx):
        if inner.hits == 10:
            times["added"] = ctx.timestamp
            session.add_probe(entry)
    entry.action, inner.action = entry_action, inner_action
    kernel.run(proc)
    session.flush()
    assert inner.hits == 67                                   # fib(8): 2*F(9)-1 calls
    inner_ts = [r.ts for r in records if r.probe == "uprobe:fib:fib+1"]
    after = sum(1 for ts in inner_ts if ts > times["added"])
    assert entry.hits == 3 + after                            # nothing lost, nothing twice
    assert kernel.config.stdout.data.endswith(b"= 21\n")


def test_a_trampoline_is_reused_only_once_no_thread_runs_it(arch):
    """Removed from its action, the probe's trampoline is where the trapping thread goes
    next: at the safe point that takes the probe out, its PC is inside, so the slot waits;
    a probe placed later, once the thread has left, gets the same slot."""
    kernel, proc, session, (first,), _ = _session(arch, "fib", [b"6"], ["uprobe:fib:fib"])
    seen = {}
    second = Probe(parse_probe_spec("uprobe:fib:fib+1"), nargs=0)
    trampolines = session.trampolines
    original_take_out = session.dynamic._take_out

    def take_out(probe):
        site = trampolines.sites[(proc.space.serial, probe.placements[0].address)]
        seen["slot"] = site.trampoline
        seen["pcs"] = kernel.debug.code_addresses_in_use(proc)
        original_take_out(probe)
        seen["deferred"] = [d.address for d in session.dynamic.deferred]
        kernel.debug.at_instruction(kernel.debug.instruction_count() + 50,
                                    lambda: session.add_probe(second))
    session.dynamic._take_out = take_out

    def action(ctx):
        session.remove_probe(first)
    first.action = action

    def second_action(ctx):
        placement = second.placements[0]
        seen["second"] = trampolines.sites[(placement.serial, placement.address)].trampoline
    second.action = second_action
    kernel.run(proc)
    slot = seen["slot"]
    assert slot in seen["pcs"] and seen["deferred"] == [slot]     # in use: not given back
    assert [address for _, address in session.dynamic.released] == [slot]
    assert seen["second"] == slot
    assert first.hits == 1 and second.hits > 0
    assert kernel.config.stdout.data.endswith(b"= 8\n")


def test_a_probe_placed_by_auto_is_taken_out_again(arch):
    kernel, proc, session, (probe,), _ = _session(arch, "fib", [b"5"], ["uprobe:fib:fib"],
                                                  strategy="auto")
    assert probe.placements[0].strategy == "jump"
    session.remove_probe(probe)
    late = session.add_probe(Probe(parse_probe_spec("uprobe:fib:main"), nargs=0))
    kernel.run(proc)
    assert probe.hits == 0 and late.hits == 1
    assert kernel.config.stdout.data.endswith(b"= 5\n")


@pytest.mark.parametrize("strategy", ["trampoline", "jump", "emulate", "singlestep",
                                      "singlestep-stopall"])
def test_a_probe_removed_after_a_fork_leaves_no_patch_in_the_child(arch, strategy):
    """fork_probe's child inherits the parent's patched leaf(); the probe is removed at the
    child's 3rd hit of leaf. The child's copy of the patch goes too (it was a placement of
    the probe, made by the fork): each process's bytes at leaf are the original ones when it
    exits, and no hit is recorded after the removal."""
    kernel, proc, session, (probe,), records = _session(
        arch, "fork_probe", [], ["uprobe:fork_probe:leaf"], strategy=strategy)
    debug = kernel.debug
    seen = {"child_hits": 0}

    def action(ctx):
        seen["leaf"] = ctx.address
        if ctx.pid != proc.pid and "removed" not in seen:
            seen["child_hits"] += 1
            if seen["child_hits"] == 3:
                seen["removed"] = ctx.timestamp
                session.remove_probe(probe)
    probe.action = action
    clean_at_exit = {}

    class Exits:
        def exit(self, process, status):
            at = seen["leaf"]
            clean_at_exit[process.pid] = (debug.read_memory_raw(process, at, 8)
                                          == debug.read_memory(process, at, 8))
    debug.subscribe(Exits(), events=("exit",))
    assert kernel.run(proc) == 0
    session.flush()
    assert kernel.config.stdout.data.endswith(b"parent: work=4 leaf=8\n")
    assert seen["child_hits"] == 3
    assert all(r.ts <= seen["removed"] for r in records if r.probe == "uprobe:fork_probe:leaf")
    assert sorted(clean_at_exit) == [100, 101] and all(clean_at_exit.values())
