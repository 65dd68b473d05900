"""Probes on the fib sample: every hit exactly once, and the program unchanged.

fib(n) calls fib exactly 2·F(n+1)−1 times (samples/README.md), so a uprobe and a uretprobe
on fib must both count that many hits, on both architectures, and the output must be the
unprobed output.
"""
import pytest

from trapline import Sandbox

from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 15])
@alternates("arch")
def test_fib_probe_counts_equal_the_call_count(arch, n):
    binary = str(SAMPLES / arch / "fib")
    plain = Sandbox().run([binary, str(n)])
    probed = Sandbox(probes=["uprobe:fib:fib", "uretprobe:fib:fib"]).run([binary, str(n)])
    calls = 2 * fibonacci(n + 1) - 1
    assert probed.hits == {"uprobe:fib:fib": calls, "uretprobe:fib:fib": calls}
    assert probed.stdout == plain.stdout == f"fib({n}) = {fibonacci(n)}\n".encode()
    assert probed.exit_code == plain.exit_code == 0
    returns = [r for r in probed.records if r.kind == "return"]
    # The outermost call returns last, with the result.
    assert returns[-1].retval == fibonacci(n)
    entries = [r for r in probed.records if r.kind == "entry"]
    assert entries[0].args[0] == n            # the first argument, from rdi or [esp+4]


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_probe_on_every_instruction_of_fib_keeps_the_output(arch):
    """A uprobe on each instruction of fib (every relocation class fib contains) at once."""
    from instrumenter.insn.decode import boundaries
    from loader.elf import load_elf_file
    binary = SAMPLES / arch / "fib"
    image = load_elf_file(str(binary))
    fib = image.symbols.lookup("fib")
    segment = next(s for s in image.segments if s.vaddr <= fib.addr < s.vaddr + s.memsz)
    code = segment.data[fib.addr - segment.vaddr: fib.addr - segment.vaddr + fib.size]
    specs = [f"uprobe:fib:fib+{a - fib.addr}" for a in boundaries(code, fib.addr, arch)]
    plain = Sandbox().run([str(binary), "12"])
    probed = Sandbox(probes=specs).run([str(binary), "12"])
    assert probed.stdout == plain.stdout and probed.exit_code == 0
    assert probed.hits[specs[0]] == 2 * fibonacci(13) - 1


@pytest.mark.e2e
def test_bad_probe_address_is_refused_with_one_line(tmp_path):
    from instrumenter.errors import InstrumenterError
    with pytest.raises(InstrumenterError, match=r"^uprobe:fib:fib\+2: not an instruction boundary "
                                                r"\(nearest: 0x[0-9a-f]+ <fib\+1>, "
                                                r"0x[0-9a-f]+ <fib\+4>\)$"):
        Sandbox(probes=["uprobe:fib:fib+2"]).run([str(SAMPLES / "x86_64" / "fib"), "3"])
