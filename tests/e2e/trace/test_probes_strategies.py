"""Strategies on the samples: the jump strategy (Python and native actions) counts every call
of fib exactly once like the int3 trampoline, without changing the output; `auto` takes the
jump where it is safe and the trampoline elsewhere, and says which; native counts and records
belong to the process that made them (fork copies the counters).
"""
from collections import Counter

import pytest
from click.testing import CliRunner

from instrumenter.strategies.jump import qualify
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.cli import main
from trapline.probespec import parse_probe_spec

from .test_probes_fib import fibonacci
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def _probe(spec: str, native: str | None = None) -> Probe:
    return Probe(parse_probe_spec(spec), native=native)


def _call_arguments(n: int) -> Counter:
    """How many times fib(n) calls fib with each argument (fib(k) calls k-1 and k-2 if k > 1)."""
    calls, pending = Counter(), [n]
    while pending:
        k = pending.pop()
        calls[k] += 1
        if k > 1:
            pending += [k - 1, k - 2]
    return calls


def _function_bytes(arch: str, name: str):
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    fn = image.symbols.lookup(name)
    seg = next(s for s in image.segments if s.vaddr <= fn.addr < s.vaddr + len(s.data))
    return fn, seg.data[fn.addr - seg.vaddr: fn.addr - seg.vaddr + fn.size]


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_jump_at_fib_covers_the_frame_pointer_prologue(arch):
    fn, code = _function_bytes(arch, "fib")
    covered = qualify(code, fn.addr, fn.name, fn.addr, arch)
    # i386: push ebp (1) + mov ebp,esp (2) + push edi (1) + push esi (1) = exactly 5 bytes;
    # x86-64: push rbp (1) + mov rbp,rsp (3) + push r14 (2) = 6: the jump ends inside push
    # r14, whose second byte becomes int3 filler.
    expected = (["push ebp", "mov ebp, esp", "push edi", "push esi"] if arch == "i386"
                else ["push rbp", "mov rbp, rsp", "push r14"])
    assert [f"{i.mnemonic} {i.op_str}" for i in covered] == expected


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("native", [None, "count", "args:1"])
@pytest.mark.parametrize("n", [0, 1, 5, 12])
@alternates("arch")
def test_jump_probe_counts_every_call_of_fib(arch, native, n):
    binary = str(SAMPLES / arch / "fib")
    plain = Sandbox().run([binary, str(n)])
    probed = Sandbox(probes=[_probe("uprobe:fib:fib", native)], strategy="jump").run([binary, str(n)])
    calls = 2 * fibonacci(n + 1) - 1
    assert probed.hits == {"uprobe:fib:fib": calls}
    assert probed.stdout == plain.stdout == f"fib({n}) = {fibonacci(n)}\n".encode()
    assert probed.exit_code == 0 and probed.dropped == {}
    if native == "count":
        assert probed.records == []                 # counted in the guest: no record per hit
    else:
        assert len(probed.records) == calls
        assert probed.records[0].args[0] == n       # rdi or [esp+4] at entry
        assert Counter(r.args[0] for r in probed.records) == _call_arguments(n)


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_auto_takes_the_jump_where_safe_and_the_trampoline_elsewhere(arch):
    fn, code = _function_bytes(arch, "fib")
    last = fn.addr + fn.size - 1                       # `ret`: 1 byte before the function ends
    specs = ["uprobe:fib:fib", f"uprobe:fib:{last:#x}"]
    choices = []
    result = Sandbox(probes=specs, on_choice=lambda p, a, s: choices.append((p.spec.text, a, s))
                     ).run([str(SAMPLES / arch / "fib"), "10"])
    assert choices == [("uprobe:fib:fib", fn.addr, "jump"), (specs[1], last, "trampoline")]
    assert result.hits == {specs[0]: 177, specs[1]: 177}
    assert result.stdout == b"fib(10) = 55\n"


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_probe_under_another_probes_jump_makes_that_one_a_trampoline(arch):
    """fib+0's jump would cover fib+1, where another probe goes: the entry gets an int3."""
    choices = []
    specs = ["uprobe:fib:fib", "uprobe:fib:fib+1", "uretprobe:fib:fib"]
    result = Sandbox(probes=specs, on_choice=lambda p, a, s: choices.append(s)
                     ).run([str(SAMPLES / arch / "fib"), "10"])
    assert choices[0] == "trampoline"
    assert result.hits == {s: 177 for s in specs}
    assert result.stdout == b"fib(10) = 55\n"


@pytest.mark.e2e
def test_forcing_the_jump_where_it_cannot_go_is_a_one_line_error():
    """fib+1 (after `push rbp`) lies under the jump that fib's own probe would write."""
    from instrumenter.errors import InstrumenterError
    binary = str(SAMPLES / "x86_64" / "fib")
    with pytest.raises(InstrumenterError, match="lies under the jump's bytes"):
        Sandbox(probes=["uprobe:fib:fib", "uprobe:fib:fib+1"], strategy="jump").run([binary, "3"])


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy,native", [("auto", None), ("trampoline", None), ("jump", None),
                                             ("jump", "count"), ("emulate", None)])
@alternates("arch")
def test_entry_and_return_probes_on_one_function_under_every_strategy(arch, strategy, native):
    """Issue 15: a uretprobe works under every strategy — the jump's Python part swaps the
    return address as an int3 would (Linux's optimized uprobes carry uretprobes too).
    fib(15) makes 1973 calls of fib; each one enters and returns once."""
    probes = [_probe("uprobe:fib:fib", native) if native else "uprobe:fib:fib", "uretprobe:fib:fib"]
    result = Sandbox(probes=probes, strategy=strategy).run([str(SAMPLES / arch / "fib"), "15"])
    assert result.exit_code == 0 and result.stdout == b"fib(15) = 610\n"
    assert sorted(result.hits.values()) == [1973, 1973]


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("native", ["count", "args:2"])
@alternates("arch")
def test_native_actions_belong_to_the_process_that_ran_them(arch, native):
    """fork_pipe's writer child calls produce() 1000 times, and so does the parent after the
    fork (to check what it received): the counters, copied by fork, count separately."""
    probe = _probe("uprobe:fork_pipe:produce", native)
    result = Sandbox(probes=[probe], strategy="jump").run([str(SAMPLES / arch / "fork_pipe")])
    assert result.stdout.endswith(b"fork_pipe: ok\n") and result.exit_code == 0
    assert result.hits == {"uprobe:fork_pipe:produce": 2000}
    if native == "args:2":
        by_pid = Counter(r.pid for r in result.records)
        assert sorted(by_pid.values()) == [1000, 1000] and len(by_pid) == 2
        for pid in by_pid:
            assert sorted(r.args[0] for r in result.records if r.pid == pid) == list(range(1000))


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_trace_cli_with_jump_and_native_count(arch, capfd):
    runner = CliRunner()
    out = runner.invoke(main, ["trace", "-p", "uprobe:fib:fib", "--strategy", "jump",
                               "--native", "count", "-c", str(SAMPLES / arch / "fib"), "10"])
    assert out.exit_code == 0, out.output
    assert capfd.readouterr().out == "fib(10) = 55\n"      # the guest writes to fd 1 itself
    assert "uprobe:fib:fib         177" in out.output
    bad = runner.invoke(main, ["trace", "-p", "uprobe:fib:fib", "--native", "sum",
                               str(SAMPLES / arch / "fib"), "1"])
    assert bad.exit_code == 2 and "expected count or args:N" in bad.output     # a usage error


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_auto_emulates_what_has_no_xol_page_in_reach(arch, monkeypatch):
    """Without an XOL page within reach neither a jump nor a trampoline can be built; the
    frame-building `push ebp`/`push rbp` at fib's entry is emulated instead, every call seen."""
    from instrumenter.strategies.xol import XolArea
    monkeypatch.setattr(XolArea, "reaches", lambda self, address: False)
    choices = []
    result = Sandbox(probes=["uprobe:fib:fib"], on_choice=lambda p, a, s: choices.append(s)
                     ).run([str(SAMPLES / arch / "fib"), "10"])
    assert choices == ["emulate"]
    assert result.hits == {"uprobe:fib:fib": 177} and result.stdout == b"fib(10) = 55\n"


@pytest.mark.e2e
def test_auto_falls_back_to_single_stepping_last_and_says_so(monkeypatch):
    """fib+1 (mov ebp, esp) is no emulated form: with no XOL page either, auto's last resorts
    take it — single-stepping, and of its two schemes the stop-all one (US 7,350,196 [0005]), which
    loses no hit in threads, before the lossy baseline — and auto says so."""
    from instrumenter.strategies.xol import XolArea
    monkeypatch.setattr(XolArea, "reaches", lambda self, address: False)
    choices = []
    result = Sandbox(probes=["uprobe:fib:fib+1"], on_choice=lambda p, a, s: choices.append(s)
                     ).run([str(SAMPLES / "i386" / "fib"), "10"])
    assert choices == ["singlestep-stopall"]
    assert result.hits == {"uprobe:fib:fib+1": 177} and result.stdout == b"fib(10) = 55\n"


@pytest.mark.e2e
def test_auto_names_every_refusal_when_nothing_takes_a_site(monkeypatch):
    """With no XOL page in reach and the single-step baseline refusing too, fib+1 (mov ebp,
    esp) is taken by nothing: auto gives up in one line that says why each strategy refused;
    fib+2, inside an instruction, is refused once, before any strategy tries it."""
    from instrumenter.errors import InstrumenterError
    from instrumenter.strategies.singlestep import SingleStepProbes
    with pytest.raises(InstrumenterError, match=r"^uprobe:fib:fib\+2: not an instruction "
                                                r"boundary \(nearest: 0x[0-9a-f]+ <fib\+1>, "
                                                r"0x[0-9a-f]+ <fib\+4>\)$"):
        Sandbox(probes=["uprobe:fib:fib+2"]).run([str(SAMPLES / "x86_64" / "fib"), "3"])
    from instrumenter.strategies.xol import XolArea
    monkeypatch.setattr(XolArea, "reaches", lambda self, address: False)

    def refuse(self, process, address):
        raise InstrumenterError("refused for the test")
    monkeypatch.setattr(SingleStepProbes, "check", refuse)
    with pytest.raises(InstrumenterError, match=r"no strategy can take .*jump: .*; trampoline: "
                                                r".*; emulate: .*; singlestep: refused for"):
        Sandbox(probes=["uprobe:fib:fib+1"]).run([str(SAMPLES / "i386" / "fib"), "3"])


@pytest.mark.e2e
@pytest.mark.parametrize("strategy", ["trampoline", "jump", "emulate"])
def test_an_action_reads_the_original_bytes_under_the_patch(strategy):
    """Issue 15: reads through the tool show the program, not the tool's int3 or jump."""
    binary = SAMPLES / "x86_64" / "fib"
    seen = []
    probe = Probe(parse_probe_spec("uprobe:fib:fib"),
                  action=lambda ctx: seen.append(ctx.read(ctx.address, 5)))
    result = Sandbox(probes=[probe], strategy=strategy).run([str(binary), "3"])
    assert result.exit_code == 0 and seen
    from loader.elf import load_elf_file
    image = load_elf_file(str(binary))
    fib = image.symbols.lookup("fib")
    segment = next(s for s in image.segments if s.vaddr <= fib.addr < s.vaddr + s.memsz)
    original = segment.data[fib.addr - segment.vaddr:fib.addr - segment.vaddr + 5]
    assert set(seen) == {original}
