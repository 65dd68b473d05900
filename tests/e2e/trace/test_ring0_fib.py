"""fib from samples/ loaded as kernel code (CPL 0) under emulate probes (US 7,350,196's own setting):
entry probes on `push %ebp`/`push %rbp` and return probes on `pop %ebp`/`pop %rbp` (or on the
`ret`) see each of the 2·F(n+1)−1 calls once, the result is right, both patch forms, both arches;
and `trapline explain` prints the patent's figures deterministically."""
import pytest
from click.testing import CliRunner

from instrumenter.strategies.emulate.kernel_probes import KernelEmulateProbes
from kernel_model.ring0 import BareGuest
from loader.elf import load_elf_file
from trapline.cli import main

from .test_probes_fib import fibonacci
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def _probed_fib(arch: str, ring: int, form: str, returns: str):
    guest = BareGuest(arch, ring=ring)
    guest.load_image(load_elf_file(str(SAMPLES / arch / "fib")))
    fib = guest.function("fib")
    probes = KernelEmulateProbes(guest, form=form, returns=returns)
    entries, returned = [], []
    result_register = "eax" if arch == "i386" else "rax"
    probes.place_entry(fib, lambda address, frame: entries.append(frame.cs))
    sites = probes.place_returns(fib, lambda address, frame: returned.append(
        (address, guest.machine.reg(result_register))))
    return guest, fib, entries, returned, sites, probes


@pytest.mark.e2e
@pytest.mark.parametrize("returns", ["frame", "ret"])
@pytest.mark.parametrize("form", ["int3", "lock"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("n", [0, 1, 5, 12])
@alternates("arch")
def test_kernel_fib_counts_every_call_once(arch, form, returns, n):
    guest, fib, entries, returned, sites, _ = _probed_fib(arch, 0, form, returns)
    assert guest.call(fib, n) == fibonacci(n)
    calls = 2 * fibonacci(n + 1) - 1
    assert len(entries) == calls and len(returned) == calls
    assert set(entries) == {guest.space.selectors.kernel_cs}      # the traps came from CPL 0
    probed = {s.insn.mnemonic for s in sites}
    assert probed == ({"pop"} if returns == "frame" else {"ret"})
    assert returned[-1][1] == fibonacci(n)          # the outermost call returns last
    assert guest.unexpected == []


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_user_mode_bare_fib_counts_the_same(arch):
    guest, fib, entries, returned, _, _ = _probed_fib(arch, 3, "int3", "frame")
    assert guest.call(fib, 10) == 55
    assert len(entries) == len(returned) == 2 * fibonacci(11) - 1
    assert set(entries) == {guest.space.selectors.user_cs}


@pytest.mark.e2e
def test_kernel_fib_runs_again_after_the_probes_are_removed():
    guest, fib, entries, _, _, probes = _probed_fib("i386", 0, "lock", "frame")
    assert guest.call(fib, 6) == 8
    count = len(entries)
    probes.remove_all()
    assert guest.call(fib, 6) == 8 and len(entries) == count


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_explain_prints_the_figures_deterministically(arch):
    runner = CliRunner()
    first = runner.invoke(main, ["explain", "--arch", arch])
    second = runner.invoke(main, ["explain", "--arch", arch])
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    sp, ip, bp = ("ESP", "EIP", "EBP") if arch == "i386" else ("RSP", "RIP", "RBP")
    for text in ("CPL 0", "CPL 3", "(FIG. 4A -> 4B", "(FIG. 5A -> 5B", "(FIG. 6A -> 6B",
                 f"{sp} after trap + 8", f"{ip}+1 (408)", "CS (404)", "(402)",
                 f"{bp} (410), pushed", f"{bp} (410), popped", f"{bp} before trap",
                 "return address"):
        assert text in first.output, text


@pytest.mark.e2e
def test_explain_push_rows_are_figure_4b():
    """The push %ebp rows of the kernel example, position by position (FIG. 4B)."""
    output = CliRunner().invoke(main, ["explain", "--mode", "kernel"]).output
    push = output.split("`push ebp`", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = {line[:54].strip(): line[54:].split() for line in push if "ESP after trap" in line[:54]}
    assert rows["ESP after trap - 4"][3:] == ["EIP+1", "(408)"]
    # [address, value before, its name..., value after, its name...]
    assert rows["ESP after trap"][2:4] == ["EIP", "(406)"] and rows["ESP after trap"][5:] == ["CS", "(404)"]
    assert rows["ESP after trap + 4"][2:4] == ["CS", "(404)"]
    assert rows["ESP after trap + 4"][5:] == ["EFLAGS", "(402)"]
    assert rows["ESP after trap + 8"][2:4] == ["EFLAGS", "(402)"]
    assert rows["ESP after trap + 8"][5:] == ["EBP", "(410),", "pushed"]


@pytest.mark.e2e
def test_explain_lock_form_says_why_enter_is_not_probed():
    output = CliRunner().invoke(main, ["explain", "--form", "lock", "--mode", "kernel"]).output
    assert "#UD (LOCK prefix)" in output
    assert "`enter` is not probed with the lock form" in output
