"""System calls in relocated functions (US 6,957,421, instrumenter/strategies/relocate/syscalls.py):
musl's functions that make their calls with an inline `syscall` / `int $0x80` run relocated —
blocking calls restarted after a handler (SA_RESTART) or ended by EINTR in the copy, sigreturn
made from a relocated `__restore_rt`, sigaction, kill, raise, setitimer, writes — and the
program prints its native output (samples/expected/signals.out) with the trampoline
strategy's hit counts; after a relocated `syscall`, RCX holds the ORIGINAL address of the next
instruction, as the CPU leaves it natively (Intel SDM Vol. 2B, SYSCALL), never a copy's."""
from __future__ import annotations

from pathlib import Path

import pytest

from instrumenter.insn.decode import decode
from instrumenter.strategies.relocate.syscalls import is_system_call
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[3] / "samples"


def _with_system_calls(arch: str, name: str) -> dict[str, list]:
    """The sample's functions that make a system call themselves: name -> the calls."""
    image = load_elf_file(str(SAMPLES / "bin" / arch / name))
    found = {}
    for symbol in image.symbols:
        if symbol.kind != "func" or not symbol.size or image.symbols.lookup(symbol.name) is not symbol:
            continue
        seg = next(s for s in image.segments if s.vaddr <= symbol.addr < s.vaddr + len(s.data))
        code = seg.data[symbol.addr - seg.vaddr:symbol.addr - seg.vaddr + symbol.size]
        at, calls = symbol.addr, []
        while at < symbol.addr + symbol.size:
            try:
                insn = decode(code[at - symbol.addr:], at, arch)
            except Exception:           # data or padding after the code: stop there
                break
            if is_system_call(insn):
                calls.append(insn)
            at = insn.next_address
        if calls:
            found[symbol.name] = calls
    return found


SIGNALS_FUNCTIONS = {"x86_64": ("__syscall_cp_c", "__restore_rt", "__libc_sigaction", "kill",
                                "raise", "setitimer", "__block_app_sigs", "__restore_sigs",
                                "sigpending", "__stdio_write"),
                     "i386": ("getpid",)}      # musl's i386 calls go through call *%gs:16


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_system_calls_made_in_copies_restart_and_return_as_in_the_original(arch):
    calls = _with_system_calls(arch, "signals")
    functions = SIGNALS_FUNCTIONS[arch]
    assert set(functions) <= set(calls)
    binary = [str(SAMPLES / "bin" / arch / "signals")]
    probes = lambda: [Probe(parse_probe_spec(f"uprobe:signals:{f}")) for f in functions]  # noqa: E731
    relocated = Sandbox(probes=probes(), strategy="relocate").run(binary)
    trampoline = Sandbox(probes=probes(), strategy="trampoline").run(binary)
    assert relocated.stdout == (SAMPLES / "expected" / "signals.out").read_bytes()
    assert relocated.exit_code == 0
    assert relocated.hits == trampoline.hits
    if arch == "x86_64":
        assert relocated.hits["uprobe:signals:__restore_rt"] >= 3    # sigreturns from the copy
        assert relocated.hits["uprobe:signals:__syscall_cp_c"] >= 2   # pause, sigsuspend
    else:
        assert relocated.hits["uprobe:signals:getpid"] >= 2


def test_rcx_after_a_relocated_syscall_is_the_original_next_address():
    arch = "x86_64"
    calls = _with_system_calls(arch, "fib")["__stdio_write"]
    seen = []

    def after_call(ctx):
        seen.append((ctx.address, ctx.register("rcx")))
    probes = [Probe(parse_probe_spec("uprobe:fib:__stdio_write"))]
    probes += [Probe(parse_probe_spec(f"uprobe:fib:0x{call.next_address:x}"), action=after_call)
               for call in calls]
    binary = [str(SAMPLES / "bin" / arch / "fib"), "5"]
    result = Sandbox(probes=probes, strategy="relocate").run(binary)
    assert result.stdout == b"fib(5) = 5\n" and result.exit_code == 0
    assert seen and all(rcx == address for address, rcx in seen)
