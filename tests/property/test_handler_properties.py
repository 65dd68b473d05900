"""User handlers in the patent's trampoline page (issue 16, US 9,336,001 FIG. 6), both arches:

  * a program probed at any instruction of fib with a handler that sets a register behaves as
    the handler says: exactly as the same program whose kernel breakpoint handler (a Python
    action through the debug interface) sets that register at that probe — same output, exit
    status and registers at exit_group — and otherwise as unprobed;
  * with a handler that changes nothing in the saved-register block (though it clobbers every
    register the psABI lets it, the flags, DF and, with fxsave, SSE state), the probed run
    equals the unprobed one: output, exit status, registers at exit_group.

The registers at the end are observed by a syscall:exit_group probe in every run (probed or
not), which records them through the debug interface.
"""
from functools import lru_cache
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from instrumenter.insn.decode import boundaries, decode
from instrumenter.insn.policy import InsnClass, classify
from instrumenter.strategies.page_layout import READ_ONLY, REGS, reg_offset
from instrumenter.strategies.handlers.user import UserHandler
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
ARCHES = ("i386", "x86_64")
BUDGET = 400_000                 # guest instructions: a changed register may recurse for ever
FLOOR = 10                       # accepted examples per property (ci profile: 30 tried)


@lru_cache(maxsize=None)
def fib_sites(arch: str) -> tuple[int, ...]:
    """Offsets of fib's instructions that the trampoline strategy relocates."""
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    fn = image.symbols.lookup("fib")
    seg = next(s for s in image.segments if s.vaddr <= fn.addr < s.vaddr + len(s.data))
    code = seg.data[fn.addr - seg.vaddr:fn.addr - seg.vaddr + fn.size]
    return tuple(a - fn.addr for a in boundaries(code, fn.addr, arch)
                 if classify(decode(code[a - fn.addr:], a, arch)).cls is not InsnClass.REFUSED)


def _changeable(arch: str) -> tuple[str, ...]:
    flags = "eflags" if arch == "i386" else "rflags"
    return tuple(r for r in REGS[arch] if r not in (flags, *READ_ONLY[arch]))


def _setter(arch: str, reg: str, value: int) -> str:
    if arch == "x86_64":
        return f"movabs rax, {value:#x}; mov qword ptr [rdi + {reg_offset(arch, reg)}], rax; ret"
    return f"mov eax, dword ptr [esp + 4]; mov dword ptr [eax + {reg_offset(arch, reg)}], {value:#x}; ret"


# Clobbers what the psABI lets a function clobber, and more: the flags, DF, SSE (fxsave).
_CLOBBER = {
    "x86_64": ("mov rax, -1; mov rcx, rax; mov rdx, rax; mov rsi, rax; mov r8, rax; mov r9, rax; "
               "mov r10, rax; mov r11, rax; xor edi, edi; std; cmp eax, 1; cld"),
    "i386": "mov eax, -1; mov ecx, eax; mov edx, eax; std; cmp eax, 1; cld",
}
_CLOBBER_SSE = {"x86_64": "pcmpeqd xmm0, xmm0; pcmpeqd xmm15, xmm15",
                "i386": "pcmpeqd xmm0, xmm0; pcmpeqd xmm7, xmm7"}


class _ExitRegisters:
    """The action of the syscall:exit_group probe: every register at the program's end."""

    def __init__(self):
        self.seen = []

    def __call__(self, ctx):
        self.seen.append(ctx.registers())


def _run(arch: str, n: int, probes: list) -> tuple:
    observer = _ExitRegisters()
    probes = probes + [Probe(parse_probe_spec("syscall:exit_group"), action=observer)]
    result = Sandbox(probes=probes, strategy="trampoline", max_insns=BUDGET).run(
        [str(SAMPLES / arch / "fib"), str(n)])
    exhausted = any("instruction budget" in m for m in result.messages)
    return exhausted, (result.exit_code, result.stdout, observer.seen)


def _fib_probe(offset: int, **kwargs) -> Probe:
    return Probe(parse_probe_spec(f"uprobe:fib:fib+{offset:#x}" if offset else "uprobe:fib:fib"),
                 nargs=0, **kwargs)


def _writer(reg: str, value: int):
    def action(ctx):
        ctx.kernel.debug.write_register(ctx.thread, reg, value)
    return action


def test_a_handler_that_sets_a_register_does_what_it_says_and_nothing_else():
    accepted = []

    @settings(max_examples=30)
    @given(data=st.data(), arch=st.sampled_from(ARCHES), n=st.integers(0, 8))
    def check(data, arch, n):
        offset = data.draw(st.sampled_from(fib_sites(arch)), label="site")
        reg = data.draw(st.sampled_from(_changeable(arch)), label="register")
        bits = 64 if arch == "x86_64" else 32
        value = data.draw(st.one_of(st.integers(0, 12), st.integers(0, 2**bits - 1)), label="value")
        handler = UserHandler("setter.s", source=_setter(arch, reg, value))
        by_handler = _run(arch, n, [_fib_probe(offset, handler=handler)])
        by_kernel = _run(arch, n, [_fib_probe(offset, action=_writer(reg, value))])
        assume(not by_handler[0] and not by_kernel[0])
        assert by_handler[1] == by_kernel[1]
        accepted.append(1)

    check()
    assert len(accepted) >= FLOOR


def test_a_handler_that_changes_nothing_leaves_the_run_as_unprobed():
    accepted = []

    @settings(max_examples=30)
    @given(data=st.data(), arch=st.sampled_from(ARCHES), n=st.integers(0, 9),
           fxsave=st.booleans())
    def check(data, arch, n, fxsave):
        offset = data.draw(st.sampled_from(fib_sites(arch)), label="site")
        source = "; ".join([_CLOBBER[arch]] + ([_CLOBBER_SSE[arch]] if fxsave else []) + ["ret"])
        handler = UserHandler("clobber.s", fxsave=fxsave, source=source)
        probed = _run(arch, n, [_fib_probe(offset, handler=handler)])
        unprobed = _run(arch, n, [])
        assert not probed[0] and not unprobed[0]
        assert probed[1] == unprobed[1]
        assert probed[1][1] == f"fib({n}) = {_fib(n)}\n".encode()
        accepted.append(1)

    check()
    assert len(accepted) >= FLOOR


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
