"""Sampling profiler overhead: a run under `trapline profile --interval 10000` vs the same run
unprofiled (issue 18's goal: <= 5 % at that interval; issue 31's: <= 1.3x --mode pc, <= 1.6x
--mode stack, exact as it is), side by side and as ratios.

Six runs of each program, in-process, best of 3 by CPU time (a busy host disturbs it less):
unprofiled; Unicorn's count (every instruction counted, as a tracing session does:
emu/icount.py); the block clock alone (armed, no tick due); the timer alone (interrupts with no
tool on them); --mode pc; --mode stack (unwind and name every sample). Per tick and per sample:
the differences divided by the samples. The timer runs on the block clock (emu/block_clock.py: a C block hook that counts
each translated block's instructions and stops the run at the first block boundary after the
tick), not on Unicorn's per-instruction counting hook ("counted"), which a run pays only when a
tool counts every instruction. "timer only" is a tool with no capture: every tick is an exit
from Unicorn and a trap through the IDT. The profiler arms the timer with a capture
(kernel_model/time/timer_capture.py): the block clock's C hook takes the ticks it can walk (PC, SP,
return addresses) without leaving Unicorn, so --mode pc/stack can cost less than "timer only";
what they add over "block clock" is the C walk plus naming and counting each sample in Python.
The host clock (`--clock host`, HOST_HZ samples a second of CPU time, perf's cpu-clock; issue
31's goal <= 1.05x): --mode pc and stack over unprofiled, and the cost per sample. Its floor: the
same clock (emu/host_clock.py, a C thread) stopping a bare Unicorn loop running fib (bench/
fib_speed.py's, resumed where each stop left it) with no trapline code at all: the CPU each stop
costs the process there is what no tick handling can remove.
"""
import time
from types import SimpleNamespace

from unicorn import x86_const as X

from emu import host_clock
from trapline import Sandbox
from trapline.profile.session import run_profiled

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


def run() -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        for name, arg in PROGRAMS:
            argv = [str(SAMPLES / arch / name), arg]
            plain, result = _cpu_best(lambda: Sandbox().run(argv))
            counted, _ = _cpu_best(lambda: _counted(argv))
            clock, _ = _cpu_best(lambda: _timer_only(argv, NEVER))
            timer, _ = _cpu_best(lambda: _timer_only(argv))
            pc, _ = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=INTERVAL, mode="pc"))
            stack, profiled = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=INTERVAL))
            assert profiled.result.stdout == result.stdout
            n = profiled.profile.total
            lines.append(f"{name} {arg} {arch:6}: unprofiled {plain * 1e3:6.1f} ms; Unicorn's count {counted / plain:.2f}x, "
                         f"block clock {clock / plain:.2f}x, timer only (IDT) {timer / plain:.2f}x, --mode pc "
                         f"{pc / plain:.2f}x, --mode stack {stack / plain:.2f}x (goals <= 1.3x, <= 1.6x); {n} samples: "
                         f"per tick through the IDT {(timer - clock) / n * 1e6:.0f} us, per sample over the block clock: "
                         f"pc {(pc - clock) / n * 1e6:.1f} us, stack {(stack - clock) / n * 1e6:.1f} us")
            lines.append(_host_line(name, arg, arch, argv, plain))
        lines.append(_bare_host_line(arch))
    return lines


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


def _bare_host_line(arch: str, n: int = 30) -> str:
    if host_clock._library() is None:
        return f"bare fib({n}) {arch}: no C host clock here ({host_clock.native.unavailable})"
    plain, (value, _) = _cpu_best(lambda: _stopped_bare_fib(arch, n, None))
    stopped, (again, stops) = _cpu_best(lambda: _stopped_bare_fib(arch, n, 1 / HOST_HZ))
    assert again == value
    return (f"bare Unicorn fib({n}) {arch:6}: {plain * 1e3:.1f} ms; stopped by the C host clock at {HOST_HZ}/s "
            f"{stopped / plain:.2f}x ({stops} stops, {(stopped - plain) / max(stops, 1) * 1e6:.0f} us each): "
            f"the floor of --clock host, with no trapline code")


def _host_line(name, arg, arch, argv, plain) -> str:
    period = 1_000_000 // HOST_HZ
    pc, pc_run = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=period, mode="pc", event="host"))
    stack, stack_run = _cpu_best(lambda: run_profiled(Sandbox(), argv, interval=period, event="host"))
    n_pc, n_stack = max(pc_run.profile.total, 1), max(stack_run.profile.total, 1)
    return (f"{name} {arg} {arch:6}: --clock host at {HOST_HZ}/s: --mode pc {pc / plain:.2f}x "
            f"({pc_run.profile.total} samples, {(pc - plain) / n_pc * 1e6:.0f} us each), --mode stack "
            f"{stack / plain:.2f}x ({stack_run.profile.total} samples, {(stack - plain) / n_stack * 1e6:.0f} us "
            f"each) (goal <= 1.05x)")


if __name__ == "__main__":
    for line in run():
        print(line)
