"""kernel_model/debug/'s operations for tools: breakpoint redirects (the int3 fast path of
kernel_model/cpu/traps.py, behind the debug interface), registers of running and switched-out
threads, and exact instruction counts on one clock across fork."""
import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernel_model.debug import DebugInterface
from kernel_model.errors import KernelError
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.idt_handlers import install_idt_handlers
from tests.unit.kernel_model.userland import user_program

ROOT = Path(__file__).resolve().parents[4]
SOURCE = "mov eax, 1; site: int3; nop; nop; target: mov ebx, 2; end: int3"


def _guest(arch):
    """A ring-3 program whose #BP gate is the kernel's (idt_handlers.py): tool handlers first, the
    `end` int3 nobody owns stops the run (deliver_exception declines)."""
    prog = user_program(arch, SOURCE, labels=("site", "target", "end"))
    thread = SimpleNamespace(tid=1, process=SimpleNamespace(machine=prog.machine))
    unowned = []
    kernel = SimpleNamespace(current=thread, int80_handler=lambda frame: False,
                             deliver_exception=lambda frame, sig: unowned.append(frame.ip) or False)
    kernel.debug = DebugInterface(kernel)
    install_idt_handlers(kernel, prog.space)
    return prog, kernel, unowned


def _full_path_handler(prog, calls):
    def on_hit(frame, thread):
        calls.append(("full", thread.tid))
        frame.ip = prog.labels["target"]
        return True
    return on_hit


def _redirect(prog, calls):
    def redirect(thread):
        calls.append(("fast", thread.tid))
        return prog.labels["target"]
    return redirect


def _ebx(prog, arch):
    return prog.machine.reg("ebx" if arch == "i386" else "rbx")


def test_a_redirect_takes_the_int3_with_the_trapping_thread(arch):
    prog, kernel, unowned = _guest(arch)
    calls = []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    kernel.debug.register_breakpoint_redirect(prog.space, site, _redirect(prog, calls))
    prog.machine.run(prog.machine.pc)
    assert calls == [("fast", 1)] and _ebx(prog, arch) == 2
    assert unowned == [prog.labels["end"] + 1]


def test_a_redirect_steps_aside_when_its_handler_is_replaced(arch):
    """Another tool took the address over: its handler gets the full trap frame."""
    prog, kernel, _ = _guest(arch)
    calls = []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, lambda frame, thread: pytest.fail("old"))
    kernel.debug.register_breakpoint_redirect(prog.space, site, _redirect(prog, calls))
    kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    prog.machine.run(prog.machine.pc)
    assert calls == [("full", 1)] and _ebx(prog, arch) == 2


def test_a_redirect_steps_aside_behind_a_gate(arch):
    """A gate on the space must see every tool trap (US 7,185,320): the redirect does not skip it."""
    prog, kernel, _ = _guest(arch)
    calls, gated = [], []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    kernel.debug.register_breakpoint_redirect(prog.space, site, _redirect(prog, calls))

    def gate(handler, address, frame, thread):
        gated.append(address)
        return handler(frame, thread)
    kernel.debug.set_gate(prog.space, gate)
    prog.machine.run(prog.machine.pc)
    assert gated == [site] and calls == [("full", 1)]


@pytest.mark.parametrize("forget", ["unregister_breakpoint", "clear_space"])
def test_forgetting_the_handler_forgets_its_redirect(arch, forget):
    prog, kernel, unowned = _guest(arch)
    calls = []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    kernel.debug.register_breakpoint_redirect(prog.space, site, _redirect(prog, calls))
    if forget == "unregister_breakpoint":
        kernel.debug.unregister_breakpoint(prog.space, site)
    else:
        kernel.debug.clear_space(prog.space)
    prog.machine.run(prog.machine.pc)
    assert calls == [] and unowned == [site + 1]          # the program's own int3 now


def _trampoline_site(prog, calls):
    """What register_breakpoint_trampoline takes: hooks (thread, address) and the IP to resume
    at, both read at the hit (set after registration here)."""
    return SimpleNamespace(hooks=[lambda thread, address: calls.append(("first", thread.tid, address)),
                                  lambda thread, address: calls.append(("second", thread.tid, address))],
                           trampoline=0)


def test_a_resolved_trampoline_redirect_runs_the_hooks_then_resumes_at_the_trampoline(arch):
    prog, kernel, unowned = _guest(arch)
    calls = []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    holder = _trampoline_site(prog, calls)
    kernel.debug.register_breakpoint_trampoline(prog.space, site, holder)
    holder.trampoline = prog.labels["target"]
    prog.machine.run(prog.machine.pc)
    assert calls == [("first", 1, site), ("second", 1, site)] and _ebx(prog, arch) == 2
    assert unowned == [prog.labels["end"] + 1]
    assert kernel.debug.tool_traps_taken() == {"int3_fast": 1}


@pytest.mark.parametrize("aside", ["replaced", "gate", "unregistered"])
def test_a_resolved_trampoline_redirect_steps_aside_as_a_redirect_does(arch, aside):
    prog, kernel, unowned = _guest(arch)
    calls, gated = [], []
    site = prog.labels["site"]
    kernel.debug.register_breakpoint(prog.space, site, lambda frame, thread: pytest.fail("old"))
    holder = _trampoline_site(prog, calls)
    holder.trampoline = prog.labels["target"]
    kernel.debug.register_breakpoint_trampoline(prog.space, site, holder)
    if aside == "replaced":
        kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
    elif aside == "gate":
        kernel.debug.register_breakpoint(prog.space, site, _full_path_handler(prog, calls))
        kernel.debug.register_breakpoint_trampoline(prog.space, site, holder)

        def gate(handler, address, frame, thread):
            gated.append(address)
            return handler(frame, thread)
        kernel.debug.set_gate(prog.space, gate)
    else:
        kernel.debug.unregister_breakpoint(prog.space, site)
    prog.machine.run(prog.machine.pc)
    if aside == "unregistered":
        assert calls == [] and unowned == [site + 1]
    else:
        assert calls == [("full", 1)] and _ebx(prog, arch) == 2
        assert gated == ([site] if aside == "gate" else [])


def test_a_resolved_trampoline_redirect_needs_a_handler_to_stand_in_for():
    prog, kernel, _ = _guest("x86_64")
    with pytest.raises(KernelError, match="without a breakpoint handler"):
        kernel.debug.register_breakpoint_trampoline(prog.space, prog.labels["site"],
                                                    SimpleNamespace(hooks=[], trampoline=0))


def test_a_redirect_needs_a_handler_to_stand_in_for():
    prog, kernel, _ = _guest("x86_64")
    with pytest.raises(KernelError, match="without a breakpoint handler"):
        kernel.debug.register_breakpoint_redirect(prog.space, prog.labels["site"], lambda t: 0)


def test_a_space_without_a_dispatcher_keeps_the_full_path_only():
    debug = DebugInterface()
    space = SimpleNamespace(serial=1)
    debug.register_breakpoint(space, 0x1000, lambda frame, thread: True)
    debug.register_breakpoint_redirect(space, 0x1000, lambda thread: 0x2000)
    debug.unregister_breakpoint_redirect(space, 0x1000)
    assert debug.breakpoint_at(space, 0x1000) is not None


# ---- registers and instruction counts on a whole kernel ------------------------------------
def _kernel(arch: str, sample: str):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / arch / sample).encode()
    return kernel, kernel.spawn(path, [path], [])


def test_registers_of_a_thread_that_is_not_running_are_its_saved_context(arch):
    kernel, proc = _kernel(arch, "hello")
    thread, machine, debug = proc.threads[0], proc.machine, kernel.debug
    pc, scratch = machine.arch.pc, "ecx" if arch == "i386" else "rcx"
    assert thread.context is not None                       # spawned, not switched in yet
    assert debug.read_register(thread, pc) == proc.image.entry
    live = machine.reg(scratch)
    debug.write_register(thread, scratch, 0x1234)
    assert machine.reg(scratch) == live                     # the Machine was not touched
    assert debug.read_register(thread, scratch) == 0x1234
    machine.restore_context(thread.context)                 # what switching it in does
    assert machine.reg(scratch) == 0x1234


def test_registers_of_the_running_thread_are_the_machine(arch):
    kernel, proc = _kernel(arch, "hello")
    thread, machine, debug = proc.threads[0], proc.machine, kernel.debug
    scratch = "ecx" if arch == "i386" else "rcx"
    kernel._switch_to(thread)
    assert thread.context is None and debug.current_thread() is thread
    debug.write_register(thread, scratch, 0x5678)
    assert machine.reg(scratch) == 0x5678 == debug.read_register(thread, scratch)


def test_an_exited_thread_has_no_registers(arch):
    kernel, proc = _kernel(arch, "hello")
    assert kernel.run(proc) == 0
    thread = proc.threads[0]
    assert kernel.debug.live_threads(proc) == []
    with pytest.raises(KernelError, match="has exited"):
        kernel.debug.read_register(thread, "eip" if arch == "i386" else "rip")


class _CountForks:
    """A tool that counts the processes it follows (fork children too, when `children`)."""

    def __init__(self, debug, children=True):
        self.debug, self.children, self.at_exit = debug, children, []

    def fork(self, parent, child):
        if self.children:
            self.debug.count_instructions(child)

    def exit(self, process, status):
        self.at_exit.append(self.debug.instructions_retired(process))


def _counted_run(arch, *, children: bool):
    kernel, proc = _kernel(arch, "fork_pipe")
    tool = _CountForks(kernel.debug, children)
    kernel.debug.subscribe(tool)
    assert kernel.debug.instructions_retired(proc) == 0     # nobody asked: not counted
    kernel.debug.count_instructions(proc)
    kernel.debug.count_instructions(proc)                   # asking twice changes nothing
    assert kernel.run(proc) == 0
    return kernel, proc, tool.at_exit


def test_instruction_counts_are_one_clock_across_fork(arch):
    kernel, proc, at_exit = _counted_run(arch, children=True)
    clock = kernel.debug.instruction_clock.total
    # every process reads the one clock: exits in order read growing times, the last all of it
    assert len(at_exit) >= 2 and at_exit == sorted(at_exit) and at_exit[0] > 0
    assert at_exit[-1] == clock      # (the process is reaped: its space is released by now)
    # the children's instructions are on it: without counting them the clock ends lower
    _, _, parent_only = _counted_run(arch, children=False)
    assert 0 < parent_only[-1] < clock
