"""ustack starts where the hit stands in the program. Inside a uretprobe: at the caller, where the function returned to (Linux's
handle_trampoline sets the IP to the original return address before the handlers run), not
at the tool's return landing; and the frames further out, whose return addresses the pending
uretprobes swapped for the landing, are the real ones. Checked against the entry's stacks: a
return's stack is its call's stack without the function's own frame. At a syscall tracepoint
or a profile: sample (no probed address): at the instruction the thread stopped at, in its own
code, not at address 0 (the stack was empty)."""
import io
from collections import Counter

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, sample

pytestmark = pytest.mark.e2e


def _run(program: str, argv: list[str], strategy: str = "auto"):
    consumers = make_consumers([(program, "-e")], io.StringIO(), lambda line: None)
    run(consumers, argv, {"capture": True}, strategy=strategy)
    return consumers[0].maps


def _stacks(values: dict) -> Counter:
    found = Counter()
    for (text,), count in values.items():
        found[tuple(line.strip() for line in text.strip().splitlines())] += count.value
    return found


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "auto"])
def test_a_return_stack_is_its_calls_stack_without_the_function(arch, strategy):
    argv = [sample(arch, "fib"), "6"]
    program = (f"uretprobe:{argv[0]}:fib {{ @ret[ustack(3)] = count(); }} "
               f"uprobe:{argv[0]}:fib {{ @entry[ustack(4)] = count(); }}")
    maps = _run(program, argv, strategy)
    entries, returns = _stacks(maps.get("@entry").values), _stacks(maps.get("@ret").values)
    assert sum(returns.values()) == 25                    # fib(6): 2 F(7) - 1 calls
    assert all(stack[0] == "fib+0" for stack in entries)
    assert returns == Counter({stack[1:]: n for stack, n in entries.items()})
    assert not any(frame.startswith("0x") for stack in returns for frame in stack)    # no landing


@pytest.mark.parametrize("arch", ARCHES)
def test_a_syscall_tracepoint_stack_starts_in_the_code_that_made_the_call(arch):
    """musl's printf reaches writev through its stdio: the stack is that chain (on i386
    the syscall is made by musl's __vsyscall stub, a symbol without a size: a bare address)."""
    maps = _run("tracepoint:syscalls:sys_enter_writev { @[ustack(3)] = count(); } "
                "tracepoint:syscalls:sys_exit_writev { @x[ustack(3)] = count(); }", [sample(arch, "hello")])
    for name in ("@", "@x"):
        stacks = _stacks(maps.get(name).values)
        assert list(stacks.values()) == [1]
        (stack,) = stacks
        assert len(stack) == 3 and any(frame.startswith("__stdio_write+") for frame in stack[:2]), stack


@pytest.mark.parametrize("arch", ARCHES)
def test_a_profile_sample_stack_is_the_interrupted_code(arch):
    maps = _run("profile:hz:99999 { @[ustack(1)] = count(); }", [sample(arch, "fib"), "18"])
    stacks = _stacks(maps.get("@").values)
    assert sum(stacks.values()) > 5
    assert all(len(stack) == 1 for stack in stacks)
    in_fib = sum(n for stack, n in stacks.items() if stack[0].startswith("fib+"))
    assert in_fib * 2 > sum(stacks.values())            # fib(18) is where the time goes
