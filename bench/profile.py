"""Sampling profiler overhead: a run under `trapline profile --interval 10000` vs the same run
unprofiled (issue 18's goal: <= 5 % at that interval; issue 31's: <= 1.3x --mode pc, <= 1.6x
--mode stack, exact as it is), side by side and as ratios.

Seven runs of each program, in-process, best of 3 by CPU time (a busy host disturbs it less):
unprofiled; Unicorn's count (every instruction counted, as a tracing session does:
emu/icount.py); the block clock alone (armed, no tick due); the timer alone (interrupts with no
tool on them); --mode pc (as the CLI runs it without -o or --record: the C handler counts the
ticks per PC, and each distinct PC is named once a hand-over) and, beside it, --mode pc keeping
a record a sample (as with -o or --record); --mode stack (unwind and name every sample). Per
tick and per sample: the differences divided by the samples. bench/profile_instructions.py
gives the deterministic modes' figures by instructions, which the host's load does not move. The timer runs on the block clock (emu/block_clock.py: a C block hook that counts
each translated block's instructions and stops the run at the first block boundary after the
tick), not on Unicorn's per-instruction counting hook ("counted"), which a run pays only when a
tool counts every instruction. "timer only" is a tool with no capture: every tick is an exit
from Unicorn and a trap through the IDT. The profiler arms the timer with a capture
(kernel_model/time/timer_capture.py): the block clock's C hook takes the ticks it can walk (PC, SP,
return addresses) without leaving Unicorn, so --mode pc/stack can cost less than "timer only";
what they add over "block clock" is the C walk plus naming and counting each sample in Python.
Their floor, "bare Unicorn ... the block clock's hook": the same hook counting the blocks of a
bare Unicorn loop running fib (bench/fib_speed.py's), beside an empty C block hook, with no
trapline code: Unicorn 2.1.4 has no instruction budget inside its translated blocks, so an
exact deterministic clock pays a call before every block (docs/unicorn.md).
The host clock (`--clock host`, HOST_HZ samples a second of CPU time, perf's cpu-clock; issue
31's goal <= 1.05x): --mode pc and stack over unprofiled, and the cost per sample. Its floor: the
same clock (emu/host_clock.py: a C thread marks the ticks, a C block hook stops the run at the
next block's start) stopping a bare Unicorn loop running fib (bench/fib_speed.py's, resumed where
each stop left it) with no trapline code at all: the block hook's cost and the CPU each stop
costs the process there are what no tick handling can remove. Both host lines split the CPU
between the thread that runs the guest and the rest, which is the clock's own thread (its
wake-ups: what the kernel charges for sleeping on a timer and waking), and the profiled lines
say how many samples the timer's C capture took where the run stopped (the others went through
the IDT and the Python unwinder, which teach the capture its rules).
"""
import ctypes
import os
import resource
import time
from types import SimpleNamespace

from unicorn import UC_HOOK_BLOCK
from unicorn import x86_const as X

from emu import block_clock, host_clock, native
from emu.block_clock import BlockClock
from emu.internals.binding import handle, uc_hook_h, uclib
from instrumenter.profiler.sampler import Sampler
from trapline import Sandbox
from trapline.profile.model import Profile
from trapline.profile.session import run_profiled
from trapline.profile.sink import ProfileSink

from .common import SAMPLES, best_of
from .fib_speed import STOP, bare_fib

INTERVAL = 10_000
HOST_HZ = 1000
NEVER = 1 << 60                 # an interval no run reaches: the block clock without a tick
# short runs (fixed costs show: the clock's setup, decoding each block once) and longer ones
PROGRAMS = (("fib", "25"), ("callchain", "400"), ("fib", "30"), ("callchain", "4000"))


def _cpu_best(fn) -> tuple[float, object]:
    return best_of(fn, clock=time.process_time)


class _Silent:
    def timer_tick(self, thread, frame):
        pass


def _timer_only(argv, interval=INTERVAL):
    def attach(kernel, process):
        kernel.debug.subscribe(_Silent())
        kernel.debug.arm_timer(interval)
    return Sandbox(tools=[attach]).run(argv)


def _counted(argv):
    def attach(kernel, process):
        kernel.debug.count_instructions(process)
    return Sandbox(tools=[attach]).run(argv)


def _cpu_sums(fn, repeat: int = 3) -> tuple[float, float, list]:
    """CPU seconds of the process and of the calling thread summed over `repeat` runs of `fn`
    (the difference is the other threads': the host clock's), and the runs' results. Sums, not
    the best run: a host clock fires fewer ticks in a run the host starves it of, and the
    cheapest run is then the one with the fewest samples."""
    total = main = 0.0
    results = []
    for _ in range(repeat):
        t0, m0 = time.process_time(), _thread_cpu()
        results.append(fn())
        total += time.process_time() - t0
        main += _thread_cpu() - m0
    return total, main, results


def _thread_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime + usage.ru_stime


def run() -> list[str]:
    lines = [f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"]
    for arch in ("i386", "x86_64"):
        for name, arg in PROGRAMS:
            argv = [str(SAMPLES / arch / name), arg]
            plain, result = _cpu_best(lambda: Sandbox().run(argv))
            counted, _ = _cpu_best(lambda: _counted(argv))
            clock, _ = _cpu_best(lambda: _timer_only(argv, NEVER))
            timer, _ = _cpu_best(lambda: _timer_only(argv))
            pc, _ = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=INTERVAL, mode="pc"))
            counted, _ = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=INTERVAL, mode="pc",
                                                        histogram=True))
            stack, profiled = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=INTERVAL))
            assert profiled.result.stdout == result.stdout
            n = profiled.profile.total
            lines.append(f"{name} {arg} {arch:6}: unprofiled {plain * 1e3:6.1f} ms; Unicorn's count {counted / plain:.2f}x, "
                         f"block clock {clock / plain:.2f}x, timer only (IDT) {timer / plain:.2f}x, --mode pc "
                         f"{counted / plain:.2f}x (a record a sample {pc / plain:.2f}x), --mode stack "
                         f"{stack / plain:.2f}x (goals <= 1.3x, <= 1.6x); {n} samples: "
                         f"per tick through the IDT {(timer - clock) / n * 1e6:.0f} us, per sample over the block clock: "
                         f"pc {(counted - clock) / n * 1e6:.2f} us (a record a sample {(pc - clock) / n * 1e6:.1f} us), "
                         f"stack {(stack - clock) / n * 1e6:.1f} us")
            lines.append(_host_line(name, arg, arch, argv))
        lines.append(_bare_host_line(arch))
        lines.append(_bare_clock_line(arch))
    return lines


def _hooked_bare_fib(arch: str, n: int, hook: str):
    """bare_fib with nothing on its blocks ("none"), Unicorn's block hook calling an empty C
    function ("empty": block_clock.c's block_clock_none), or the block clock counting
    every block with no deadline ("clock": the deterministic timer's hook, less its stops)."""
    run = bare_fib(arch, n)
    if hook == "empty":
        uc = run.uc
        handle_ = uc_hook_h()
        uclib.uc_hook_add(handle(uc), ctypes.byref(handle_), UC_HOOK_BLOCK,
                          ctypes.cast(native.load("block_clock").block_clock_none, ctypes.c_void_p),
                          None, ctypes.c_uint64(1), ctypes.c_uint64(0))
        uc.ctl_flush_tb()
        run.hook = handle_
    elif hook == "clock":           # (the clock reads a Machine's Uc, code epoch and width)
        machine = SimpleNamespace(uc=run.uc, mem=SimpleNamespace(code_epoch=0),
                                  arch=SimpleNamespace(bits=32 if arch == "i386" else 64))
        run.clock = BlockClock(machine)
    return run


def _bare_clock_line(arch: str, n: int = 30) -> str:
    """The floor under the deterministic modes: what the block clock's hook costs a bare
    Unicorn loop running fib (no trapline code), beside Unicorn's block hook calling an
    empty function; --mode pc/stack cannot go under `clock`, whatever they do per sample."""
    if not block_clock.available():
        return f"bare fib({n}) {arch}: no C block clock here"
    times = {}
    for hook in ("none", "empty", "clock"):
        run = _hooked_bare_fib(arch, n, hook)
        times[hook], _ = _cpu_best(run)
    plain = times["none"]
    return (f"bare Unicorn fib({n}) {arch:6}: {plain * 1e3:.1f} ms; an empty C block hook "
            f"{times['empty'] / plain:.2f}x, the block clock's hook {times['clock'] / plain:.2f}x: "
            f"the floor of --mode pc and --mode stack, with no trapline code")


def _stopped_bare_fib(arch: str, n: int, period_s: float | None) -> tuple[int, int]:
    """fib(n) on a bare Uc, run to its end through the stops of the host clock at `period_s`
    (None: no clock); (fib(n), the stops)."""
    run = bare_fib(arch, n)
    pc_register = X.UC_X86_REG_EIP if arch == "i386" else X.UC_X86_REG_RIP
    clock = host_clock.start(period_s) if period_s else None
    stops, pc = 0, run.fib
    run.uc.context_restore(run.start)
    try:
        if clock is not None:
            clock.running(SimpleNamespace(uc=run.uc))
        while True:
            run.uc.emu_start(pc, STOP)
            pc = run.uc.reg_read(pc_register)
            if pc == STOP:
                return run.uc.reg_read(X.UC_X86_REG_EAX), stops
            stops += 1
            clock.take()
    finally:
        if clock is not None:
            clock.close()


def _bare_host_line(arch: str, n: int = 30, repeat: int = 3) -> str:
    if host_clock._library() is None:
        return f"bare fib({n}) {arch}: no C host clock here ({host_clock.native.unavailable})"
    plain, _, values = _cpu_sums(lambda: _stopped_bare_fib(arch, n, None), repeat)
    stopped, main, runs = _cpu_sums(lambda: _stopped_bare_fib(arch, n, 1 / HOST_HZ), repeat)
    assert {value for value, _ in runs} == {values[0][0]}
    stops = max(sum(count for _, count in runs), 1)
    return (f"bare Unicorn fib({n}) {arch:6}: {plain / repeat * 1e3:.1f} ms; stopped by the C host clock at "
            f"{HOST_HZ}/s {stopped / plain:.2f}x ({stops / repeat:.0f} stops a run, "
            f"{(stopped - plain) / stops * 1e6:.0f} us each, of which the clock's thread "
            f"{(stopped - main) / stops * 1e6:.0f} us): the floor of "
            f"--clock host, with no trapline code (means of {repeat} runs)")


def _host_line(name, arg, arch, argv, repeat: int = 3) -> str:
    period = 1_000_000 // HOST_HZ
    plain, _, _ = _cpu_sums(lambda: Sandbox().run(argv), repeat)
    figures = []
    for mode in ("pc", "stack"):
        total, main, runs = _cpu_sums(lambda: _host_profiled(argv, period, mode), repeat)
        n = max(sum(len(samples) for samples, _ in runs), 1)
        captured = sum(sampler.captured for _, sampler in runs)
        figures.append(f"--mode {mode} {total / plain:.2f}x ({n / repeat:.0f} samples a run, "
                       f"{100 * captured / n:.0f} % captured, {(total - plain) / n * 1e6:.0f} us each, "
                       f"of which the clock's thread "
                       f"{(total - main) / n * 1e6:.0f} us)")
    return (f"{name} {arg} {arch:6}: --clock host at {HOST_HZ}/s: {', '.join(figures)} (goal <= 1.05x; "
            f"means of {repeat} runs)")


def _host_profiled(argv, period: int, mode: str) -> tuple[list, Sampler]:
    """run_profiled's host-clock profile of `argv` (its Sampler into a Profile through the same
    sink, less the DWARF lines resolved once at the end): the samples, and the Sampler (how
    many of them its capture took)."""
    profile = Profile(interval=period, mode=mode, event="host", command=list(argv))
    sink, doors, samplers = ProfileSink(profile), [], []

    def attach(kernel, process):
        sampler = Sampler(kernel.debug, interval=period, mode=mode, event="host", on_sample=sink.sample,
                          on_module=sink.module, on_event=sink.event)
        sampler.attach(process)
        samplers.append(sampler)
        doors.append(kernel.debug)
    try:
        Sandbox(tools=[attach]).run(argv)
    finally:
        for door in doors:
            door.disarm_timer()
    return profile.samples, samplers[0]


if __name__ == "__main__":
    for line in run():
        print(line)
