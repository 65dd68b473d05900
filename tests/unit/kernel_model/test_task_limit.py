"""The task limit (issue 26): fork gets EAGAIN there and a program that handles it goes on; a
fork bomb, whose every task keeps forking at the limit with nothing ending, is stopped with a
report instead of spinning until --max-insns runs out; and a slice that fork ends early does
not give its thread a fresh quantum (a parent spinning on fork kept the CPU from the child it
waited for)."""
import io
from pathlib import Path

import pytest

from kernel_model.errno import EAGAIN
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.task_limit import RUNAWAY_FAILURES, RUNAWAY_TASKS, TaskLimitRunaway
from trapline.exit_status import STOPPED, status_for

from .tinyelf import tiny_elf, write_program

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 12                  # above RUNAWAY_TASKS, small enough to fork quickly


class ForkFailures:
    """The debug interface's fork_failed events, by errno and by parent."""

    def __init__(self):
        self.by_parent: dict[int, int] = {}
        self.errnos: set[int] = set()

    def fork_failed(self, parent, child_pid, errno):
        self.errnos.add(errno)
        self.by_parent[parent.pid] = self.by_parent.get(parent.pid, 0) + 1


def _kernel(**config) -> Kernel:
    return Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                               stderr=CapturedOutput(), report=io.StringIO(), **config))


def _sample(kernel: Kernel, arch: str, *args: bytes):
    path = str(ROOT / "samples" / "bin" / arch / "forkbomb").encode()
    return kernel.spawn(path, [path, *args], [])


@pytest.mark.parametrize("mode", [(), (b"retry",)], ids=["bomb", "retrying-bomb"])
def test_a_fork_bomb_at_the_limit_is_stopped_with_a_report(arch, mode):
    kernel = _kernel(max_tasks=LIMIT, max_insns=200_000_000)
    failures = ForkFailures()
    kernel.debug.subscribe(failures)
    proc = _sample(kernel, arch, *mode)
    with pytest.raises(TaskLimitRunaway) as stopped:
        kernel.run(proc)
    assert str(stopped.value) == (
        f"task limit of {LIMIT} reached and kept: {LIMIT} processes and 0 other threads alive, "
        f"{LIMIT} processes created in all; {RUNAWAY_TASKS} tasks failed {RUNAWAY_FAILURES} or "
        f"more forks each (EAGAIN) with none ending: a runaway, stopped")
    assert status_for(stopped.value) == STOPPED == 124
    assert kernel.processes_created == LIMIT                  # never more than the limit
    assert failures.errnos == {EAGAIN}
    assert len([n for n in failures.by_parent.values() if n >= RUNAWAY_FAILURES]) == RUNAWAY_TASKS
    assert kernel.insns_used < kernel.config.max_insns        # the report, not the budget


def test_a_program_that_meets_the_limit_and_recovers_runs_to_its_end(arch):
    """forkbomb recover: LIMIT-1 children wait on a pipe, fork fails with EAGAIN, three retries
    fail too, the children are let go and reaped, and the next fork succeeds."""
    kernel = _kernel(max_tasks=LIMIT)
    failures = ForkFailures()
    kernel.debug.subscribe(failures)
    proc = _sample(kernel, arch, b"recover")
    assert kernel.run(proc) == 0
    assert kernel.config.stdout.data == (
        f"recover: {LIMIT - 1} children before EAGAIN\n"
        f"recover: 3 retries failed\n"
        f"recover: fork after reaping: ok\n").encode()
    assert failures.by_parent == {proc.pid: 4}
    assert kernel.processes_created == LIMIT + 1


# fork(); the child counts down CHILD_LOOPS and exits; the parent forks again until it gets a
# child (EAGAIN while the first child lives, at a limit of 2), and that child and the parent
# exit 0.
CHILD_LOOPS = 20_000
SPIN_ON_FORK = {
    "i386": f"mov eax, 2; int 0x80; test eax, eax; jz child; "
            f"retry: mov eax, 2; int 0x80; test eax, eax; js retry; "
            f"done: xor ebx, ebx; mov eax, 1; int 0x80; "
            f"child: mov ecx, {CHILD_LOOPS}; count: dec ecx; jnz count; jmp done",
    "x86_64": f"mov eax, 57; syscall; test eax, eax; jz child; "
              f"retry: mov eax, 57; syscall; test eax, eax; js retry; "
              f"done: xor edi, edi; mov eax, 60; syscall; "
              f"child: mov ecx, {CHILD_LOOPS}; count: dec ecx; jnz count; jmp done",
}


def test_a_parent_spinning_on_fork_leaves_its_child_the_cpu(tmp_path, arch):
    """Every failed fork ends the parent's slice early; its quantum still runs out, so the
    child runs its 40 000 instructions (20 quanta of 2 000), exits, and the parent's next fork
    succeeds. It spun at the limit for ever before (a new quantum after each fork), until the
    budget ran out. One task spinning is no runaway, however many times it fails."""
    path = write_program(tmp_path, f"spin-{arch}", tiny_elf(arch, SPIN_ON_FORK[arch]))
    kernel = _kernel(max_tasks=2, quantum=2_000, max_insns=5_000_000)
    failures = ForkFailures()
    kernel.debug.subscribe(failures)
    proc = kernel.spawn(str(path).encode(), [b"spin"], [])
    assert kernel.run(proc) == 0
    assert failures.by_parent[proc.pid] > RUNAWAY_FAILURES
    assert kernel.processes_created == 3
