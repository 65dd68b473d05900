"""The tools' clocks (kernel_model/time/cpu_time.py): a virtual time that moves with every counted
instruction, never backwards, and per-thread instruction counts."""
from dataclasses import dataclass

from hypothesis import given, strategies as st

from kernel_model.time.clock import VirtualClock
from kernel_model.time.cpu_time import CpuTime


@dataclass
class FakeMachine:
    instructions_retired: int = 0
    icount: object = "counting"


@dataclass
class FakeThread:
    tid: int
    instructions: int = 0


def _slice_of(ran: int):
    """A CpuTime whose thread 1 is in a slice that ran `ran` counted instructions so far."""
    clock = VirtualClock()
    cpu = CpuTime(clock)
    machine, thread = FakeMachine(), FakeThread(1)
    cpu.begin(machine)
    machine.instructions_retired += ran
    return clock, cpu, thread


def test_a_slice_a_syscall_ends_is_on_the_tools_clock_but_not_on_the_guests():
    clock, cpu, thread = _slice_of(700)
    assert cpu.virtual_time_ns() == 700                  # inside the slice (a hook)
    assert cpu.thread_instructions(thread, running=True) == 700
    cpu.end(thread, 0)                                   # ended by a system call
    clock.tick_syscall()
    assert clock.elapsed_ns == 1_000                     # the guest sees the call's cost only
    assert cpu.virtual_time_ns() == 1_700
    assert thread.instructions == 700


def test_a_preempted_slice_is_charged_once():
    clock, cpu, thread = _slice_of(5_000)
    cpu.end(thread, 5_000)
    assert (clock.elapsed_ns, cpu.virtual_time_ns()) == (5_000, 5_000)


def test_without_counting_the_tools_clock_is_the_guests():
    clock = VirtualClock()
    cpu = CpuTime(clock)
    thread = FakeThread(1)
    cpu.begin(FakeMachine())                             # instructions_retired stays 0
    cpu.end(thread, 5_000)
    assert (clock.elapsed_ns, cpu.virtual_time_ns(), thread.instructions) == (5_000, 5_000, 0)


def test_counting_that_starts_inside_a_slice_adds_nothing_for_it():
    """A tool counts the process from inside a slice on: the run's clock may already hold
    other processes' instructions, which are not this slice's."""
    clock = VirtualClock()
    cpu = CpuTime(clock)
    machine, thread = FakeMachine(icount=None), FakeThread(1)
    cpu.begin(machine)
    machine.icount, machine.instructions_retired = "counting", 90_000
    assert cpu.virtual_time_ns() == 0
    cpu.end(thread, 0)
    assert (cpu.virtual_time_ns(), thread.instructions) == (0, 0)


slices = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10_000), st.booleans(),
                            st.booleans()), min_size=1, max_size=30)


@given(slices)
def test_the_tools_clock_never_goes_back_and_counts_every_instruction(plan):
    """Slices of three threads, each preempted or ended by a system call: the clock read
    inside and after every slice never decreases; at the end it is every instruction plus the
    guest's system call costs, and each thread has exactly its own instructions."""
    clock = VirtualClock()
    cpu = CpuTime(clock)
    machine = FakeMachine()
    threads = [FakeThread(tid) for tid in range(3)]
    last, syscalls, own = 0, 0, [0, 0, 0]
    for index, ran, preempted, halfway in plan:
        cpu.begin(machine)
        machine.instructions_retired += ran // 2 if halfway else ran
        assert cpu.virtual_time_ns() >= last
        last = cpu.virtual_time_ns()
        machine.instructions_retired += ran - ran // 2 if halfway else 0
        cpu.end(threads[index], ran if preempted else 0)
        if not preempted:
            clock.tick_syscall()
            syscalls += 1
        own[index] += ran
        assert cpu.virtual_time_ns() >= last
        last = cpu.virtual_time_ns()
    assert last == machine.instructions_retired + syscalls * 1_000
    assert [t.instructions for t in threads] == own
