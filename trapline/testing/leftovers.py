"""What a detach must leave behind: nothing of the tool in any live process (US 7,017,153;
instrumenter/tracing/detach.py). Read through the kernel's debug interface, the moment the
detach is done: the text of every mapped object is the image's, no tool page is mapped, and
no register and no word of any thread's live stack points into the former tool pages.
"""
from __future__ import annotations

from emu.registers import gpr_names
from instrumenter.tracing.detach import TOOL_AREAS
from kernel_model.memory.vm import PROT_EXEC


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


def text_problems(kernel) -> list[str]:
    """Where the text of a live process differs from its image (a patch left in)."""
    return [problem for process in kernel.debug.live_processes()
            for problem in _text_problems(kernel.debug, process)]


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
