"""ustack inside a uretprobe starts at the caller, where the function returned to (Linux's
handle_trampoline sets the IP to the original return address before the handlers run), not
at the tool's return landing; and the frames further out, whose return addresses the pending
uretprobes swapped for the landing, are the real ones. Checked against the entry's stacks: a
return's stack is its call's stack without the function's own frame."""
import io
from collections import Counter

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, sample

pytestmark = pytest.mark.e2e


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
    consumers = make_consumers([(program, "-e")], io.StringIO(), lambda line: None)
    run(consumers, argv, {"capture": True}, strategy=strategy)
    maps = consumers[0].maps
    entries, returns = _stacks(maps.get("@entry").values), _stacks(maps.get("@ret").values)
    assert sum(returns.values()) == 25                    # fib(6): 2 F(7) - 1 calls
    assert all(stack[0] == "fib+0" for stack in entries)
    assert returns == Counter({stack[1:]: n for stack, n in entries.items()})
    assert not any(frame.startswith("0x") for stack in returns for frame in stack)    # no landing
