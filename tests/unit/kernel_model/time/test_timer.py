"""The profiling timer (kernel_model/time/timer.py, debug/timer.py): an interrupt every N guest
instructions through the IDT's timer vector, deterministic and invisible to the program."""
from pathlib import Path

import pytest

from kernel_model.errors import KernelError
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.time.timer import TIMER_VECTOR

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"


class Ticks:
    def __init__(self, kernel):
        self.kernel, self.seen = kernel, []

    def timer_tick(self, thread, frame):
        bp = self.kernel.debug.read_register(thread, "ebp" if frame.word == 4 else "rbp")
        self.seen.append((thread.tid, frame.ip, frame.sp, bp,
                          self.kernel.debug.instructions_retired(thread.process)))


def _run(arch, program, args, interval=None, quantum=None):
    out = CapturedOutput(name=b"out")
    config = KernelConfig(stdout=out, stderr=out)
    if quantum:
        config.quantum = quantum
    kernel = Kernel(config)
    proc = kernel.spawn(str(SAMPLES / arch / program).encode(), [program.encode(), *args], [])
    ticks = Ticks(kernel)
    kernel.debug.subscribe(ticks)
    kernel.debug.count_instructions(proc)
    if interval:
        kernel.debug.arm_timer(interval)
    status = kernel.run(proc)
    kernel.first = proc
    return kernel, status, out.data, ticks.seen


def test_a_tick_every_interval_instructions(arch):
    kernel, status, out, seen = _run(arch, "fib", [b"18"], interval=3000)
    total = kernel.debug.instruction_clock.total
    assert status == 0 and out == b"fib(18) = 2584\n"
    assert len(seen) == total // 3000 == kernel.debug.timer_ticks() > 20
    # each tick is taken exactly at a multiple of the interval (the clock counts the program's
    # instructions only: the tick itself runs no guest code)
    assert [s[4] for s in seen] == [3000 * (i + 1) for i in range(len(seen))]


def test_the_tick_carries_the_interrupted_threads_frame(arch):
    kernel, _, _, seen = _run(arch, "fib", [b"15"], interval=997)
    fib = kernel.first.image.symbols.lookup("fib")
    in_fib = [s for s in seen if fib.addr <= s[1] < fib.addr + fib.size]
    assert len(in_fib) > len(seen) // 2           # fib is where the program spends its time
    for _tid, ip, sp, bp, _ in in_fib:
        assert sp <= bp or ip == fib.addr          # on the user stack, below the frame it made


def test_the_gate_is_a_ring0_interrupt_gate(arch):
    kernel = Kernel(KernelConfig(stdout=CapturedOutput(name=b"out")))
    proc = kernel.spawn(str(SAMPLES / arch / "fib").encode(), [b"fib", b"22"], [])
    gates = []
    kernel.debug.subscribe(type("Probe", (), {"timer_tick": lambda _, t, f: gates.append(
        (proc.space.idt.gate(TIMER_VECTOR), f.cs & 3, f.address))})())
    kernel.debug.arm_timer(50_000)
    kernel.run(proc)
    gate, ring, _ = gates[0]
    assert gate.present and gate.dpl == 0 and gate.kind == 0xE and ring == 3


def test_the_timer_does_not_perturb_the_program(arch):
    """Same output, same instructions, same virtual clock with and without the timer, with
    four threads scheduled by quanta (the timer cuts slices, the scheduler never sees it)."""
    plain = _run(arch, "threads", [], quantum=20_000)
    timed = _run(arch, "threads", [], interval=7_919, quantum=20_000)
    assert plain[2] == timed[2] and plain[1] == timed[1] == 0
    assert plain[0].debug.instruction_clock.total == timed[0].debug.instruction_clock.total
    assert plain[0].clock.elapsed_ns == timed[0].clock.elapsed_ns
    assert len({tid for tid, *_ in timed[3]}) >= 4         # ticks hit several threads


def test_the_same_run_takes_the_same_samples(arch):
    first = _run(arch, "threads", [], interval=5_003, quantum=20_000)[3]
    assert first == _run(arch, "threads", [], interval=5_003, quantum=20_000)[3] and first


def test_a_bad_interval_is_refused():
    kernel = Kernel(KernelConfig())
    with pytest.raises(KernelError, match="positive"):
        kernel.debug.arm_timer(0)
    with pytest.raises(KernelError, match="event"):
        kernel.debug.arm_timer(10, event="cycles")


class Calls:
    def __init__(self):
        self.count = 0

    def syscall_entry(self, thread, name, args):
        pass

    def syscall_exit(self, thread, name, args, result):
        self.count += 1


@pytest.mark.parametrize("every", [1, 3])
def test_a_tick_every_n_system_calls_after_the_call(arch, every):
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out))
    proc = kernel.spawn(str(SAMPLES / arch / "fileio").encode(), [b"fileio"], [])
    calls, after = Calls(), []
    kernel.debug.syscall_watchers.append(calls)
    kernel.debug.subscribe(type("Tool", (), {"timer_tick": lambda _, thread, frame: after.append(
        kernel.debug.read_memory(thread.process, frame.ip - 2, 2))})())
    kernel.debug.arm_timer(every, event="syscalls")
    plain = _run(arch, "fileio", [])
    assert kernel.run(proc) == plain[1] and out.data == plain[2]
    # exit_group never returns; every other call's return was counted
    assert len(after) == calls.count // every > 5
    assert set(after) <= {b"\x0f\x05", b"\xcd\x80"}          # right after syscall / int $0x80


class TickTimes:
    def __init__(self, kernel):
        self.kernel, self.times = kernel, []

    def timer_tick(self, thread, frame):
        self.times.append(self.kernel.debug.timer_instructions())


def _run_uncounted(arch, interval):
    """The profiler's case: nothing counts every instruction, so the timer runs on the block
    clock (emu/block_clock.py) and ticks land on the first block boundary at or after each
    multiple of the interval."""
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out))
    proc = kernel.spawn(str(SAMPLES / arch / "fib").encode(), [b"fib", b"18"], [])
    ticks = TickTimes(kernel)
    kernel.debug.subscribe(ticks)
    kernel.debug.arm_timer(interval)
    return kernel.run(proc), out.data, ticks.times


def test_uncounted_ticks_land_on_the_block_boundary_after_each_multiple(arch):
    counted = _run(arch, "fib", [b"18"], interval=3000)
    status, out, times = _run_uncounted(arch, 3000)
    assert (status, out) == (counted[1], counted[2]) == (0, b"fib(18) = 2584\n")
    total = counted[0].debug.instruction_clock.total
    assert len(times) == total // 3000 or len(times) == total // 3000 - 1
    for k, ts in enumerate(times, start=1):
        assert 3000 * k <= ts < 3000 * k + 64        # a block of fib is a few instructions
    assert times == _run_uncounted(arch, 3000)[2]    # the same run, the same ticks


def test_captured_ticks_reach_batch_and_single_tick_subscribers_alike(arch):
    """With a capture, a subscriber with timer_tick_batch gets the ticks in batches and one
    with only timer_tick gets them one by one, each while timer_instructions reads its time:
    the same ticks, at the same times, in the same order."""
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out))
    proc = kernel.spawn(str(SAMPLES / arch / "fib").encode(), [b"fib", b"20"], [])
    door = kernel.debug

    class Batches:
        def __init__(self):
            self.seen = []

        def timer_tick_batch(self, thread, frames):
            self.seen += [(f.ip, f.ts) for f in frames]

    class Single:
        def __init__(self):
            self.seen = []

        def timer_tick(self, thread, frame):
            self.seen.append((frame.ip, door.timer_instructions()))

    batches, single = Batches(), Single()
    door.subscribe(batches)
    door.subscribe(single)
    door.arm_timer(1000, capture="pc")
    assert kernel.run(proc) == 0
    if not door.timer_capturing():
        pytest.fail("no C compiler for the tick capture")
    assert batches.seen == single.seen and len(single.seen) > 50
    # each at the first block boundary at or after its multiple of the interval (block_clock.py)
    times = [ts for _, ts in single.seen]
    assert all(1000 * (i + 1) <= ts < 1000 * (i + 2) for i, ts in enumerate(times))
