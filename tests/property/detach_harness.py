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
from instrumenter.tracing.detach import TOOL_AREAS
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from emu.registers import gpr_names
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code
from kernel_model.memory.vm import PROT_EXEC
from trapline.probespec import parse_probe_spec

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


def leftovers(kernel, report) -> list[str]:
    """Everything of the tool still visible in any live process (nothing, after a detach)."""
    debug = kernel.debug
    ranges = [(start, end) for _, start, end, _ in report.unmapped]
    problems = []
    for process in debug.live_processes():
        problems += _text_problems(debug, process)
        for vma in process.space.vm.vmas:
            if vma.name in TOOL_AREAS:
                problems.append(f"pid {process.pid}: {vma.name!r} still mapped at {vma.start:#x}")
        for thread in debug.live_threads(process):
            problems += _thread_problems(debug, thread, ranges)
    return problems


def _text_problems(debug, process) -> list[str]:
    problems = []
    for mapped in debug.images(process) or [_Mapped(process.image)]:
        image = mapped.image
        if image is None:
            continue
        for segment in image.segments:
            if not segment.perms & PROT_EXEC or not segment.filesz:
                continue
            now = debug.read_memory_raw(process, segment.vaddr, segment.filesz)
            if now != segment.data:
                at = next(i for i, (a, b) in enumerate(zip(now, segment.data)) if a != b)
                problems.append(f"pid {process.pid}: text differs at {segment.vaddr + at:#x}")
    return problems


def _thread_problems(debug, thread, ranges) -> list[str]:
    arch = debug.arch(thread.process)
    # A former tool range that starts where one of the program's areas ends (a thread stack
    # mmapped right below the XOL pages) has its first byte equal to a one-past-the-end
    # pointer the program legitimately holds (pthread's stack top): that value is ambiguous.
    ends = {vma.end for vma in thread.process.space.vm.vmas}
    inside = lambda value: any(start <= value < end and not (value == start and start in ends)  # noqa: E731
                               for start, end in ranges)
    problems = []
    for name in (*gpr_names(arch), arch.pc):
        value = debug.read_register(thread, name)
        if inside(value):
            problems.append(f"tid {thread.tid}: {name} = {value:#x} (tool)")
    sp = debug.read_register(thread, arch.sp)
    low, high = debug.stack_range(thread, sp)
    raw = debug.read_memory(thread.process, low, high - low)
    word = arch.word
    for offset in range(0, len(raw) - word + 1, word):
        value = int.from_bytes(raw[offset:offset + word], "little")
        if inside(value):
            problems.append(f"tid {thread.tid}: stack word at {low + offset:#x} = {value:#x} (tool)")
    return problems


class _Mapped:
    def __init__(self, image):
        self.image = image
