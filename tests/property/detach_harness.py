"""Runs for the detach property and tests: a sample probed with one strategy, detached at an
instruction count, and the checks made the moment the detach is done (Session.detach,
instrumenter/tracing/detach.py): every process's text is the image's, no tool page is mapped,
no register and no live stack word of any thread points into the former tool pages.
"""
from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from pathlib import Path

from instrumenter.errors import InstrumenterError
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code
from trapline.probespec import parse_probe_spec
from trapline.testing.leftovers import leftovers  # noqa: F401 -- the tests import it from here too

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"


@dataclass
class DetachRun:
    exit_code: int
    stdout: bytes
    records: list
    report: object = None
    problems: list = field(default_factory=list)     # what the checks at the detach found
    checked: bool = False
    refused: str | None = None                       # a strategy refused a site


def _kernel(quantum: int):
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(b""), stdout=stdout,
                                 stderr=CapturedOutput(), report=io.StringIO(), quantum=quantum))
    return kernel, stdout


@functools.cache
def unprobed(arch: str, guest: str, args: tuple[bytes, ...], quantum: int) -> tuple[int, bytes]:
    kernel, stdout = _kernel(quantum)
    path = str(SAMPLES / arch / guest).encode()
    proc = kernel.spawn(path, [path, *args], [])
    return wait_status_exit_code(kernel.run(proc)), stdout.data


def detach_run(arch: str, guest: str, args: tuple[bytes, ...], specs, strategy: str,
               at: int, quantum: int, native: str | None = None,
               at_hit: int | None = None, trigger: str | None = None) -> DetachRun:
    """Detach once the clock reaches `at`, or (`at_hit`) from the probes' actions at their
    at_hit-th hit in all: the next safe point then finds a thread just sent into tool code.
    `trigger` (one of `specs`): only that probe's hits count and carry the action (it is never
    native: a native action runs in the guest, and the detach is asked from a Python one)."""
    kernel, stdout = _kernel(quantum)
    path = str(SAMPLES / arch / guest).encode()
    proc = kernel.spawn(path, [path, *args], [])
    records: list = []
    probes = []
    hits = [0]

    def action(context):
        hits[0] += 1
        if hits[0] == at_hit:
            detach()
    for text in specs:
        spec = parse_probe_spec(text)
        counts = at_hit is not None and trigger in (None, text)
        in_guest = spec.kind == "uprobe" and text != trigger
        probes.append(Probe(spec, nargs=2, native=native if in_guest else None,
                            action=action if counts else None))
    session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy=strategy)
    result = DetachRun(0, b"", records)
    try:
        session.attach(proc)
    except InstrumenterError as refused:
        result.refused = str(refused)
        return result

    def detach():
        result.report = session.detach(at_once=at_hit is None, on_done=check)

    def check(report) -> None:
        result.checked = True
        result.problems += leftovers(kernel, report)
    if at_hit is None:
        kernel.debug.at_instruction(at, detach)
    result.exit_code = wait_status_exit_code(kernel.run(proc))
    session.flush()
    result.stdout = stdout.data
    return result
