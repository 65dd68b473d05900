"""Threads at small quanta: every hit counted, nothing changed, while the scheduler switches
threads every few instructions (US 7,350,196 [0004]-[0006]: a probe that takes its patch out
while it runs loses the hits of the threads that pass meanwhile).

samples/loss_threads (pthreads) and samples/loss_procs (clone(CLONE_VM) processes sharing the
code) run WORKERS workers that each call probed() CALLS times; probed() is straight-line code,
so a probe on ANY of its instructions must record WORKERS * CALLS hits, and the program's
output and exit status must be the unprobed run's at the same quantum.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from hypothesis import strategies as st

from .guests import output_difference, probed_run, sample, unprobed

GUESTS = ("loss_threads", "loss_procs")


@dataclass
class ThreadsCase:
    """Plain data (its repr is Python): the sample, its workers and calls, the quantum (guest
    instructions a thread runs before the scheduler may switch) and the probed offset."""
    arch: str
    guest: str
    workers: int
    calls: int
    quantum: int
    offset: int

    @property
    def spec(self) -> str:
        return f"uprobe:{self.guest}:probed+{self.offset}" if self.offset else \
            f"uprobe:{self.guest}:probed"

    @property
    def args(self) -> tuple[str, ...]:
        return (str(self.workers), str(self.calls))


@functools.cache
def probed_offsets(arch: str, guest: str) -> tuple[int, ...]:
    """Offsets of the instruction starts of probed(), from the file."""
    from elftools.elf.elffile import ELFFile

    from instrumenter.insn.decode import boundaries
    with open(sample(arch, guest), "rb") as handle:
        elf = ELFFile(handle)
        symbol = elf.get_section_by_name(".symtab").get_symbol_by_name("probed")[0]
        address, size = symbol["st_value"], symbol["st_size"]
        handle.seek(next(elf.address_offsets(address)))
        code = handle.read(size)
    return tuple(a - address for a in boundaries(code, address, arch))


@st.composite
def threads_cases(draw, arch: str) -> ThreadsCase:
    guest = draw(st.sampled_from(GUESTS))
    return ThreadsCase(arch, guest, draw(st.integers(1, 4)), draw(st.integers(1, 20)),
                       draw(st.integers(1, 60)), draw(st.sampled_from(probed_offsets(arch, guest))))


def threads_difference(case: ThreadsCase, strategy: str) -> str | None:
    expected = unprobed(case.arch, case.guest, case.args, case.quantum)
    run = probed_run(case.arch, case.guest, case.args, case.quantum, [case.spec], strategy)
    diff = output_difference(expected, run)
    if diff is not None:
        return diff
    hits, calls = run.probes[0].hits, case.workers * case.calls
    if hits != calls:
        return f"hits: the workers made {calls} calls, the probe recorded {hits}"
    return None


def describe(case: ThreadsCase) -> list[str]:
    return [f"  {case.guest} {case.workers} {case.calls} at quantum {case.quantum}, "
            f"probe {case.spec}"]
