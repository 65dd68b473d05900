"""The emulate strategy (US 7,350,196) on fib: entry probes on `push %ebp`/`push %rbp` and return
probes on every `ret` see each of the 2·F(n+1)−1 calls, in both patch forms (int3 and the
LOCK-prefix #UD), on both architectures, and the program's output is unchanged."""
import pytest

from instrumenter.errors import InstrumenterError
from trapline import Sandbox

from .test_probes_fib import fibonacci
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


@pytest.mark.e2e
@pytest.mark.parametrize("strategy", ["emulate", "emulate-lock"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("n", [0, 1, 5, 12])
@alternates("arch")
def test_fib_entry_and_return_counts_with_emulation(arch, strategy, n):
    binary = str(SAMPLES / arch / "fib")
    probed = Sandbox(probes=["uprobe:fib:fib", "uretprobe:fib:fib"],
                     strategy=strategy).run([binary, str(n)])
    calls = 2 * fibonacci(n + 1) - 1
    assert probed.hits == {"uprobe:fib:fib": calls, "uretprobe:fib:fib": calls}
    assert probed.stdout == f"fib({n}) = {fibonacci(n)}\n".encode() and probed.exit_code == 0
    returns = [r for r in probed.records if r.kind == "return"]
    assert returns[-1].retval == fibonacci(n)           # the outermost call returns last
    assert [r for r in probed.records if r.kind == "entry"][0].args[0] == n


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_emulate_refuses_an_instruction_it_does_not_emulate(arch):
    # fib+8 (i386: mov 0x8(%ebp),%eax) and fib+7 (x86_64: cmp $0x1,%edi) are plain instructions.
    offset = 8 if arch == "i386" else 7
    with pytest.raises(InstrumenterError, match="not an instruction the emulate strategy takes"):
        Sandbox(probes=[f"uprobe:fib:fib+{offset}"],
                strategy="emulate").run([str(SAMPLES / arch / "fib"), "3"])


@pytest.mark.e2e
def test_singlestep_counts_fib_calls_exactly_with_one_thread():
    binary = str(SAMPLES / "i386" / "fib")
    probed = Sandbox(probes=["uprobe:fib:fib"], strategy="singlestep").run([binary, "10"])
    assert probed.hits == {"uprobe:fib:fib": 2 * fibonacci(11) - 1}
    assert probed.stdout == b"fib(10) = 55\n"
