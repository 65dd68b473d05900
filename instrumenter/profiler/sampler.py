"""The sampling profiler's kernel-side handler (US 7,823,129's tprof phase): on every tick of the
profiling timer (kernel_model/debug/timer.py) it takes the interrupted thread's PC from the trap
frame and, in stack mode, unwinds its stack from the live registers (frame pointers and CFI:
unwind.py), names every frame (symbolize.py) and hands the sample on.

Time is virtual: the timer interrupts every `interval` guest instructions of the run, so the
k-th sample is taken at instruction k * interval exactly, whatever process runs. With
`event="host"` it is not: the timer ticks every `interval` microseconds of the host's CPU
time (perf's cpu-clock) and a sample's time is that CPU time in nanoseconds. Sampling
every `interval` system calls, taken branches or page faults (`event="syscalls"`, "branches",
"faults"), the processes count their instructions (emu/icount.py) and a sample's time is the
instruction count at its tick.
Ticks of instructions are taken at the interrupt, in C, where the timer's capture can walk them
(kernel_model/debug/timer.py): the sampler teaches it every step its own live walks take, and
names the frames it hands over (CapturedFrame) like those of a live walk — the same samples,
at a fraction of the cost (bench/profile.py). A tool that only counts samples per PC (PC mode,
`on_tally`) has the C handler count them per PC: each distinct PC is named once a hand-over and
reaches on_tally with how many ticks it stands for.
The sampler also reports module loads (the program at exec, libraries as they are mapped), the
seed's "module load records", so that a recorded trace can be named again later.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from kernel_model.debug import WALK_REGISTERS

from .callsite import Functions
from .symbolize import Frame, Symbolizer
from .unwind import Unwinder

MODES = ("pc", "stack")
EVENTS = ("insns", "syscalls", "branches", "faults", "host")


class Sample(NamedTuple):
    ts: int                      # guest instructions of the run before the tick (virtual time)
    pid: int
    tid: int
    comm: str                    # the process's program name
    frames: tuple[Frame, ...]    # the interrupted PC first, then return addresses outwards
    truncated: str | None        # why the unwind stopped early; None when it reached the start


class ModuleLoad(NamedTuple):
    ts: int
    pid: int
    path: str
    base: int
    end: int


class ModuleUnload(NamedTuple):
    """An object's first page was unmapped (dlclose): addresses in it name nothing any more."""
    ts: int
    pid: int
    path: str
    base: int
    end: int


class Interrupt(NamedTuple):
    """A timer interrupt (US 7,823,129's interrupt records): its vector and the trap frame's IP/SP."""
    ts: int
    pid: int
    tid: int
    vector: int
    ip: int
    sp: int


class ThreadSwitch(NamedTuple):
    """The CPU went on with pid/tid after prev_pid/prev_tid (0/0: the first slice traced)."""
    ts: int
    pid: int
    tid: int
    prev_pid: int
    prev_tid: int


class Sampler:
    """Subscribe it to the debug interface and arm the timer: `attach(process)`."""

    def __init__(self, door, *, interval: int, mode: str = "stack", event: str = "insns",
                 on_sample: Callable[[Sample], None], on_module: Callable[[ModuleLoad], None] | None = None,
                 fixup=None, on_event: Callable[[tuple], None] | None = None,
                 batch: int | None = None, native: bool = True,
                 on_tally: Callable[[Sample, int], None] | None = None):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
        if event not in EVENTS:
            raise ValueError(f"event {event!r}: expected one of {', '.join(EVENTS)}")
        self.door, self.interval, self.mode, self.event = door, interval, mode, event
        self.on_sample, self.on_module = on_sample, on_module
        # on_event(record): the trace's other records (Interrupt, ThreadSwitch, ModuleUnload)
        self.on_event = on_event
        # batch: samples taken at the interrupt (debug/timer.py's capture) reach on_sample at the
        # latest when that many wait (1: each at its tick, as a tool that acts on it needs)
        self.batch, self.native = batch, native
        # on_tally(sample, n), PC mode: the C handler counts ticks per PC, and a sample stands
        # for the n ticks at its PC of a thread between two hand-overs (its `ts` the first's);
        # those ticks reach neither on_sample nor on_event (as Interrupt): nothing per tick
        self.on_tally = on_tally if mode == "pc" else None
        self.captured = 0            # ticks the timer's C handler took (the others: live)
        self.shared_frames = 0       # frames of those named as the sample before named them
        self.unwinder = Unwinder(door, fixup, learn=door.timer_learn)   # fixup: hooks.LandingFixup
        self.symbolizer = Symbolizer(door, Functions(door, self.unwinder.table_for), self.unwinder)
        self.ticks = 0
        self._comm = (None, "")      # (the exe it was taken from, the program's name)

    def attach(self, process) -> None:
        """Start sampling the run `process` belongs to (the timer interrupts every process)."""
        self.door.subscribe(self)
        self.door.arm_timer(self.interval, event=self.event, batch=self.batch,
                            capture=self.mode if self.native else None,
                            histogram=self.on_tally is not None)
        self._count(process)
        self._announce_modules(process)

    def _count(self, process) -> None:
        if self.event not in ("insns", "host"):
            self.door.count_instructions(process)      # the samples' virtual time

    def _now(self, process) -> int:
        if self.event == "insns":
            return self.door.timer_instructions()
        if self.event == "host":
            return self.door.timer_host_ns()           # host CPU time: not deterministic
        return self.door.instructions_retired(process)

    # ---- events of the debug interface -------------------------------------------------------
    def timer_tick(self, thread, frame) -> None:
        """A tick through the IDT, registers live (the capture's come by timer_tick_batch)."""
        self.ticks += 1
        process = thread.process
        if self.on_event is not None:
            self.on_event(Interrupt(self._now(process), process.pid, thread.tid, frame.vector,
                                    frame.ip, frame.sp or 0))
        if self.mode == "pc":
            addresses, truncated = (frame.ip,), None
        else:
            stack = self.unwinder.unwind(process, walk_registers(self.door, process, frame),
                                         tid=thread.tid)
            addresses, truncated = stack.frames, stack.truncated
        frames = self.symbolizer.frames(process, addresses)
        self.on_sample(Sample(self._now(process), process.pid, thread.tid,
                              self._comm_of(process), frames, truncated))

    def timer_tick_batch(self, thread, frames) -> None:
        """The ticks the timer's C handler took since the last delivery (CapturedFrames of
        `thread`, in order, each with its time): timer_tick's work, with what is the same for
        all of them looked up once."""
        process, on_event, on_sample = thread.process, self.on_event, self.on_sample
        pid, tid, comm = process.pid, thread.tid, self._comm_of(process)
        self.symbolizer.follow(process)             # one image map for the whole batch
        name, name_after = self.symbolizer.named, self.symbolizer.named_after
        pc_only = self.mode == "pc"
        self.ticks += len(frames)
        self.captured += len(frames)
        make = tuple.__new__        # the records without a NamedTuple's Python __new__ each
        named = ()
        for vector, ip, sp, stack, ts, shared in frames:
            if on_event is not None:
                on_event(make(Interrupt, (ts, pid, tid, vector, ip, sp)))
            if pc_only:
                named = name(process, (ip,))
            elif shared:            # the outer frames of the sample before (CapturedFrame)
                named = name_after(process, stack, shared, named)
                self.shared_frames += shared
            else:
                named = name(process, stack)
            on_sample(make(Sample, (ts, pid, tid, comm, named, None)))

    def timer_tick_tally(self, thread, tallies) -> None:
        """The ticks the timer's C handler counted per PC since the last delivery (TickTally
        of `thread`): each PC named once, against the image map of its ticks."""
        process, on_tally = thread.process, self.on_tally
        if on_tally is None:
            return                  # (another tool's histogram: this one asked for none)
        pid, tid, comm = process.pid, thread.tid, self._comm_of(process)
        self.symbolizer.follow(process)
        name, make, ticks = self.symbolizer.named, tuple.__new__, 0
        for ip, count, ts in tallies:
            on_tally(make(Sample, (ts, pid, tid, comm, name(process, (ip,)), None)), count)
            ticks += count
        self.ticks += ticks
        self.captured += ticks

    def _comm_of(self, process) -> str:
        exe = process.exe
        if exe is not self._comm[0]:
            self._comm = (exe, _comm(process))
        return self._comm[1]

    def exec(self, process, path, argv) -> None:
        self._count(process)
        self._announce_modules(process)

    def fork(self, parent, child) -> None:
        self._count(child)

    def vfork(self, parent, child) -> None:
        self._count(child)

    def thread_switch(self, previous, thread) -> None:
        if self.on_event is not None:
            before = (previous.process.pid, previous.tid) if previous is not None else (0, 0)
            self.on_event(ThreadSwitch(self._now(thread.process), thread.process.pid, thread.tid, *before))

    def image_unmapped(self, process, mapped) -> None:
        if self.on_event is not None:
            self.on_event(ModuleUnload(self._now(process), process.pid,
                                       mapped.path.decode(errors="replace"), mapped.base, mapped.end))

    def image_mapped(self, process, mapped) -> None:
        if self.on_module is not None:
            self.on_module(ModuleLoad(self._now(process), process.pid,
                                      mapped.path.decode(errors="replace"), mapped.base, mapped.end))

    def _announce_modules(self, process) -> None:
        for mapped in self.door.images(process):
            self.image_mapped(process, mapped)


# The interrupted frame's registers are all live, and its CFI may name any of them: a
# realigned function's prologue has the CFA in %ecx/%r10 (gcc's DRAP) before it saves it. The
# walk reads the caller-saved ones too; after the first step only the callee-saved are known.
CALLER_SAVED = {64: ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"),
                32: ("eax", "ecx", "edx")}


def walk_registers(door, process, frame) -> dict:
    """The interrupted thread's registers for a walk: IP and SP from the trap frame (what the
    interrupt saved), the others live (an interrupt gate changes no general register)."""
    cpu = door.cpu(process)
    bits = cpu.arch.bits
    names = WALK_REGISTERS[bits] + CALLER_SAVED[bits]
    regs = dict(zip(names, cpu.register_batch(names).read()))
    regs[names[0]], regs[names[1]] = frame.ip, frame.sp
    return regs


def _comm(process) -> str:
    return process.exe.rsplit(b"/", 1)[-1].decode(errors="replace") or f"pid{process.pid}"
