"""Children of an instrumented parent (US 7,185,320), for random probe sets and random process trees.

samples/forkscript runs a generated script of calls, vforks, forks, execs and exits from argv
(forkscript_model.py), printing each image's calls, pid and the hash of its probed functions'
bytes as it sees them. For random probes on those functions (entry, a random instruction inside,
return), random scripts, both arches, the policies follow / detach (lazy or eager backpatching):

- the parent's records (all of its images: an exec keeps the pid) equal its actual calls, and
  under follow every child's records equal its calls under its own pid; under detach no child
  has a record;
- under detach a fork child and what any detached child execs hash to the unprobed bytes; a
  vfork child does from its first hit on (lazy) or from the start (eager) — before its first
  hit it still sees the parent's instrumented bytes; under follow every image is instrumented;
- each image sees the same bytes at every hash: after a child is gone, the instrumentation of
  the parent is complete again;
- at every vfork-done, once the monitor has acted, the parent's probed code is byte-identical
  to what it was at the pre-fork event, before the monitor acted (observers on the kernel's
  debug interface, subscribed before and after the session).
"""
from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

from elftools.elf.elffile import ELFFile
from hypothesis import given, strategies as st

from instrumenter.insn.decode import boundaries
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

from trapline.testing.forkscript import FUNCTIONS, Output, argv, hit_before_each_hash, images, scripts

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
ARCHES = ("i386", "x86_64")


def fnv1a(data: bytes) -> int:
    value = 2166136261
    for byte in data:
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return value


def probed_section(arch: str) -> tuple[int, bytes]:
    """(address, bytes) of the section `probed`, from the file: the unprobed code."""
    with open(SAMPLES / arch / "forkscript", "rb") as handle:
        section = ELFFile(handle).get_section_by_name("probed")
        return section["sh_addr"], section.data()


def instruction_offsets(arch: str) -> dict[str, list[int]]:
    """{function: offsets of its instruction starts}: where a uprobe may go."""
    from loader.elf import load_elf_file
    image = load_elf_file(str(SAMPLES / arch / "forkscript"))
    start, code = probed_section(arch)
    offsets = {}
    for name in FUNCTIONS.values():
        symbol = image.symbols.lookup(name)
        body = code[symbol.addr - start: symbol.addr - start + symbol.size]
        offsets[name] = [a - symbol.addr for a in boundaries(body, symbol.addr, arch)]
    return offsets


OFFSETS = {arch: instruction_offsets(arch) for arch in ARCHES}


@st.composite
def probe_sets(draw, arch: str):
    """A non-empty set of (kind, function, offset): entry or inner uprobes and uretprobes.
    The last instruction (ret) is left out of inner sites: it is a uretprobe's own place."""
    sites = []
    for function in sorted(FUNCTIONS.values()):
        offsets = OFFSETS[arch][function][:-1]
        if draw(st.booleans()):
            sites.append(("uprobe", function, draw(st.sampled_from(offsets))))
        if draw(st.booleans()):
            sites.append(("uretprobe", function, 0))
    if not sites:
        sites.append(("uprobe", draw(st.sampled_from(sorted(FUNCTIONS.values()))), 0))
    return sites


def spec_text(site) -> str:
    kind, function, offset = site
    where = f"{function}+{offset}" if offset else function
    return f"{kind}:forkscript:{where}"


class SpaceWatch:
    """Reads the parent's probed code at pre-fork and vfork-done. Subscribed before the session
    it sees the space before the monitor acts; after it, what the monitor left."""

    def __init__(self, start: int, size: int):
        self.start, self.size = start, size
        self.at_pre_fork: dict[int, bytes] = {}
        self.at_vfork_done: list[tuple[int, bytes]] = []

    def read(self, process) -> bytes:
        return process.machine.mem.read(self.start, self.size)

    def pre_fork(self, parent, child_pid, vfork):
        self.at_pre_fork[parent.pid] = self.read(parent)

    def vfork_done(self, parent, child):
        self.at_vfork_done.append((parent.pid, self.read(parent)))


def run_forkscript(arch, steps, specs, strategy, children, backpatch):
    stdout = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO()))
    path = str(SAMPLES / arch / "forkscript")
    proc = kernel.spawn(path.encode(), [a.encode() for a in [path, *argv(steps)]], [])
    start, code = probed_section(arch)
    before, after = SpaceWatch(start, len(code)), SpaceWatch(start, len(code))
    kernel.debug.subscribe(before)
    records = []
    session = Session(kernel, [Probe(parse_probe_spec(s)) for s in specs],
                      buffers=Buffers(drain=records.extend), strategy=strategy,
                      children=children, backpatch=backpatch)
    kernel.debug.subscribe(after)
    session.attach(proc)
    status = kernel.run(proc)
    session.flush()
    return status, stdout.data, records, before, after, session.monitor.reports


def expected_records(calls: Counter, sites) -> Counter:
    """Each call of a probed function passes each of its sites once (straight-line code)."""
    kind_of = {"uprobe": "entry", "uretprobe": "return"}
    expected = Counter()
    for kind, function, offset in sites:
        if calls[function]:
            expected[(function, kind_of[kind])] += calls[function]
    return expected


def recorded(records, sites) -> dict[int, Counter]:
    function_of = {spec_text(site): site[1] for site in sites}
    per_pid: dict[int, Counter] = {}
    for record in records:
        per_pid.setdefault(record.pid, Counter())[(function_of[record.probe], record.kind)] += 1
    return per_pid


POLICY = st.sampled_from([("follow", "lazy"), ("detach", "lazy"), ("detach", "eager")])


@given(data=st.data(), arch=st.sampled_from(ARCHES), policy=POLICY,
       strategy=st.sampled_from(["trampoline", "auto"]))
def test_children_policies_on_random_process_trees(data, arch, policy, strategy):
    children, backpatch = policy
    sites = sorted(set(data.draw(probe_sets(arch), label="probes")))
    # Under detach the vfork children stay flat (calls, hashes, exec, exit: what the patent's
    # vfork child does); under follow they may fork and vfork again.
    steps = data.draw(scripts(max_depth=2, vfork_children_flat=children == "detach"),
                      label="script")
    specs = [spec_text(site) for site in sites]
    status, stdout, records, before, after, monitor = run_forkscript(
        arch, steps, specs, strategy, children, backpatch)
    assert status == 0, stdout
    out = Output(stdout)
    top_pid = out.pid["P"]

    # Records per pid equal the calls each process printed.
    actual = {pid: expected_records(calls, sites) for pid, calls in out.calls_per_pid().items()}
    actual = {pid: counts for pid, counts in actual.items() if counts}
    got = recorded(records, sites)
    if children == "follow":
        assert got == actual
    else:
        assert got == {pid: c for pid, c in actual.items() if pid == top_pid}

    check_hashes(arch, steps, out, sites, children, backpatch)

    # The parent's space after each vfork child equals its instrumented image before it.
    for pid, code in after.at_vfork_done:
        assert code == before.at_pre_fork[pid], f"pid {pid}: instrumentation not restored"
    assert not any("prediction wrong" in line for line in monitor), monitor


def check_hashes(arch, steps, out, sites, children, backpatch):
    unprobed = fnv1a(probed_section(arch)[1])
    probed_functions = {site[1] for site in sites}
    for label, origins, own_steps in images(steps):
        hashes = out.hashes.get(label, [])
        lineage = [o for o in origins[1:] if o != "e"]
        detached = children == "detach" and bool(lineage)
        if not detached:
            # A traced image: instrumented, and the same bytes at every hash.
            assert all(h != unprobed for h in hashes), (label, hashes)
            assert len(set(hashes)) <= 1, (label, hashes)
        elif lineage != ["v"] or origins[-1] != "v" or backpatch == "eager":
            # Fork children are cleaned (and so is what they vfork); exec'd images of detached
            # children are not traced; an eager vfork child never sees a patch.
            assert all(h == unprobed for h in hashes), (label, hashes)
        else:
            parent_label = label[:label.rindex("v")]
            parent_hashes = out.hashes.get(parent_label, [])
            for hit, value in zip(hit_before_each_hash(own_steps, probed_functions), hashes):
                if hit:
                    assert value == unprobed, (label, hashes)
                else:
                    assert value != unprobed and value in (parent_hashes or [value]), (
                        label, hashes, parent_hashes)
