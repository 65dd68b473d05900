"""The relocation property with the host CPU as a second oracle (host.py runs the code).

For one case: the original in place under Unicorn and on the host must agree — a
disagreement is an emulator erratum, matched against ERRATA (known ones are counted by name
and do not fail; an unknown one fails, naming the instruction) — and the copy on the host
must agree with the original on the host, as under Unicorn (oracles.check_relocation): a
relocation proven on the real processor too.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from instrumenter.errors import InstrumenterError

from .host import HostSkip, run_on_host
from .layouts import machine_for
from .oracles import (Difference, Outcome, RelocationCase, Verdict, dead_below, first_difference,
                      run_outcome, undefined_flags)


@dataclass(frozen=True)
class Erratum:
    """A known disagreement of Unicorn with the processor: where the SDM says what the host
    does, what Unicorn does instead, and what trapline does about it."""
    name: str
    sdm: str
    matches: object             # matches(insn, difference) -> bool
    workaround: str


# Known errata of Unicorn 2.1.4 the host oracle has met (docs/unicorn.md keeps the others).
ERRATA: tuple[Erratum, ...] = ()


def check_on_host(case: RelocationCase, relocator) -> Verdict:
    insn, layout = case.insn, case.layout
    if insn.branch_target is not None and 0 <= insn.branch_target - insn.address < len(insn.raw):
        return Verdict("skipped", "a branch into the instruction itself")
    try:
        relocated = relocator(insn, layout.xol, case.arch)
    except InstrumenterError as refusal:
        return Verdict("refused", str(refusal))
    try:
        host = run_on_host(layout, insn.raw, relocated.code, layout.orig)
        host_copy = run_on_host(layout, insn.raw, relocated.code, layout.xol)
    except HostSkip as skip:
        return Verdict("skipped", f"host: {skip}")
    emulated = run_outcome(machine_for(layout, insn.raw, relocated.code), layout.orig,
                           layout.regions)
    erratum = first_difference(_as_host_sees(emulated, host), host,
                               undefined_flags=undefined_flags(insn), stack=layout.stack,
                               dead_below=0, labels=("Unicorn", "host CPU"))
    if erratum is not None:
        known = next((e for e in ERRATA if e.matches(insn, erratum)), None)
        if known is not None:
            return Verdict("skipped", f"known erratum: {known.name}")
        return Verdict("failed", relocated=relocated, difference=Difference(
            "erratum", f"emulator erratum? {erratum.where}", erratum.original, erratum.other,
            erratum.labels))
    diff = first_difference(host, host_copy, undefined_flags=undefined_flags(insn),
                            stack=layout.stack, dead_below=dead_below(insn, relocated, host),
                            labels=("in place on the host CPU", "relocated on the host CPU"))
    return Verdict("failed" if diff else "passed", relocated=relocated, difference=diff)


def _as_host_sees(outcome: Outcome, host: Outcome) -> Outcome:
    """The host's SIGSEGV does not say whether a data access read or wrote: neither side does."""
    if outcome.exit.access != host.exit.access and host.exit.access is None:
        return replace(outcome, exit=replace(outcome.exit, access=None))
    return outcome
