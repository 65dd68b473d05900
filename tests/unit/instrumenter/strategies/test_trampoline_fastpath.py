"""The breakpoint redirect (kernel_model/cpu/traps.py): an int3 whose #BP handler only rewrites the
saved IP may skip materialising the trap frame. These tests run the same code through the fast
path and the full path (frame on the kernel stack, handler, IRET) and require the same end
state; and they check the fast path steps aside whenever its preconditions do not hold."""
import pytest

from kernel_model.cpu import idt as V
from kernel_model.cpu.traps import TrapDispatcher
from tests.unit.kernel_model.userland import USER_CODE, USER_SP, user_program
from trapline import Sandbox

SOURCE = "mov eax, 1; push 7; site: int3; nop; nop; target: mov ebx, 2; push 9; end: int3"
REGS = {"i386": ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp", "eip", "eflags",
                 "cs", "ss", "ds", "es"),
        "x86_64": ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r11",
                   "rip", "rflags", "cs", "ss")}


@pytest.fixture(params=["i386", "x86_64"])
def arch(request):
    return request.param


def _program(arch, *, fast: bool):
    """The program with a #BP handler that sends the int3 at `site` to `target` (and stops
    at `end`); with `fast`, the same redirect registered for the fast path."""
    prog = user_program(arch, SOURCE, labels=("site", "target", "end"))
    site, target = prog.labels["site"], prog.labels["target"]
    calls = {"full": 0, "fast": 0}

    def on_breakpoint(frame):
        if frame.ip - 1 != site:
            return False                               # `end`: stop the run
        calls["full"] += 1
        frame.ip = target
        return True
    prog.space.idt.set_gate(V.BP, on_breakpoint, dpl=3)

    def redirect():
        calls["fast"] += 1
        return target
    prog.space.traps.set_breakpoint_redirect(site, redirect)
    prog.space.traps.fast_breakpoints = fast
    return prog, calls


def _state(prog, arch):
    m, lay = prog.machine, prog.space.layout
    regs = {name: m.reg(name) for name in REGS[arch]}
    return (regs, m.mem.read(USER_SP - 0x100, 0x200),
            m.mem.read(lay.kstacks, lay.kstack_pages * 0x1000))


def test_fast_and_full_paths_end_in_the_same_state(arch):
    fast, fast_calls = _program(arch, fast=True)
    full, full_calls = _program(arch, fast=False)
    for prog in (fast, full):
        prog.machine.run(prog.machine.pc)
    assert fast_calls == {"full": 0, "fast": 1} and full_calls == {"full": 1, "fast": 0}
    # registers, user stack, and the kernel stacks: the `end` int3 wrote its frame over the
    # one the full path wrote for `site`, so even the scratch words agree
    assert _state(fast, arch) == _state(full, arch)
    assert fast.machine.reg("ebx" if arch == "i386" else "rbx") == 2


def test_the_full_path_wrote_a_frame_that_the_fast_path_omits(arch):
    """What the fast path leaves out is exactly the frame's words below the kernel stack top."""
    fast, _ = _program(arch, fast=True)
    full, _ = _program(arch, fast=False)
    frames = {}
    for name, prog in (("fast", fast), ("full", full)):
        gate = prog.space.idt.handler_for(V.BP)
        top, word = prog.space.kstack_top(0), prog.machine.arch.word

        def on_end(frame, gate=gate, name=name, prog=prog, top=top, word=word):
            if frame.ip - 1 == prog.labels["end"]:
                return False
            frames[name] = prog.machine.mem.read(top - 5 * word, 5 * word)
            return gate(frame)
        prog.space.idt.set_gate(V.BP, on_end, dpl=3)
        prog.space.traps.set_breakpoint_redirect(prog.labels["site"], lambda p=prog: p.labels["target"])
        prog.space.traps.fast_breakpoints = name == "fast"
        prog.machine.run(prog.machine.pc)
    assert "fast" not in frames and frames["full"] != bytes(len(frames["full"]))


def test_a_replaced_gate_takes_the_int3_back_to_the_full_path(arch):
    prog, calls = _program(arch, fast=True)
    seen = []
    prog.space.idt.set_gate(V.BP, lambda frame: seen.append(frame.ip) or False, dpl=3)
    prog.machine.run(prog.machine.pc)
    assert calls["fast"] == 0 and seen == [prog.labels["site"] + 1]


def test_a_redirect_that_declines_sends_the_hit_through_the_full_path(arch):
    prog, calls = _program(arch, fast=True)
    prog.space.traps.set_breakpoint_redirect(prog.labels["site"], lambda: None)
    prog.machine.run(prog.machine.pc)
    assert calls["full"] == 1
    assert prog.machine.reg("ebx" if arch == "i386" else "rbx") == 2


def test_ring0_int3_is_never_redirected():
    """In ring 0 the frame goes on the live stack (no privilege change): its words are visible
    to the interrupted code, so the fast path must not drop them."""
    prog = user_program("i386", "push 0x1234; site: int3; pop ebx; int 0x80", labels=("site",),
                        enter=False)
    m, space = prog.machine, prog.space
    m.set_reg("cs", space.selectors.kernel_cs)
    m.set_reg("ss", space.selectors.kernel_ds)
    m.sp = USER_SP
    full = []
    space.idt.set_gate(V.BP, lambda frame: full.append(frame.ip) or True, dpl=3)
    space.idt.set_gate(V.SYSCALL_VECTOR, lambda frame: False, dpl=3)
    space.traps.set_breakpoint_redirect(prog.labels["site"], lambda: pytest.fail("redirected"))
    m.run(USER_CODE)
    assert full == [prog.labels["site"] + 1]


def _traced(arch, monkeypatch, fast: bool):
    monkeypatch.setattr(TrapDispatcher, "fast_breakpoints", fast, raising=False)
    seen = []

    def action(ctx):
        seen.append((ctx.timestamp, tuple(sorted(ctx.registers().items()))))
    from instrumenter.probes.definitions import Probe
    from trapline.probespec import parse_probe_spec
    probes = [Probe(parse_probe_spec(spec), action=action, nargs=2)
              for spec in ("uprobe:fib:fib", "uprobe:fib:fib+1", "uprobe:fib:main")]
    result = Sandbox(probes=probes, strategy="trampoline").run([f"samples/bin/{arch}/fib", "7"])
    return result, seen


def test_probed_fib_runs_the_same_with_and_without_the_fast_path(arch, monkeypatch):
    """Same output, same records (timestamps in instructions included), same registers at
    every hit, whichever path the int3 takes."""
    fast, fast_seen = _traced(arch, monkeypatch, True)
    full, full_seen = _traced(arch, monkeypatch, False)
    assert fast.stdout == full.stdout == b"fib(7) = 13\n"
    assert fast.records == full.records and fast_seen == full_seen
    assert fast.hits["uprobe:fib:fib"] == 2 * 21 - 1
