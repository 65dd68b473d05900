"""The library debugger's breakpoints carried into a relocated function (US 6,957,421,
US 6,957,421; kernel_model/debug/code_aliases.py): on fib's entry, on an instruction of its
body and on a return point, resumed plainly (no step over the breakpoint, as GDB would do),
the stops under `relocate` are those under `trampoline`, one per original instruction run —
the entry and return points, stopped at in the original code before the relocate int3 sends
the thread into the copy, are not stopped at again there — and the probe counts are equal."""
import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import BREAKPOINT
from trapline import Sandbox

from .test_debugger import ScriptedUser


def _points(debugger, process):
    """fib, its third instruction, and the return point of its first recursive call."""
    fib = debugger.debug.images(process)[0].image.symbols.lookup("fib")
    from instrumenter.insn.decode import decode
    code = debugger.read_memory(process, fib.addr, fib.size)
    arch = debugger.debug.arch(process).name
    at, insns = fib.addr, []
    while at < fib.addr + fib.size:
        insns.append(decode(code[at - fib.addr:], at, arch))
        at = insns[-1].next_address
    call = next(i for i in insns if "call" in i.groups and i.branch_target == fib.addr)
    return [fib.addr, insns[2].address, call.next_address]


def _stops(arch, strategy):
    user = ScriptedUser([])

    def at_start(debugger, event, seen):
        for address in _points(debugger, event.thread.process):
            debugger.insert_breakpoint(address)
        debugger.resume()

    def go_on(debugger, event, seen):
        user.script.append(go_on)
        debugger.resume()
    user.script = [at_start, go_on]

    def attach(kernel, process, session):
        user.debugger = Debugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger.attach(process)

    result = Sandbox(probes=["uprobe:fib:fib", "uprobe:fib:fib+1"], strategy=strategy,
                     on_start=attach).run([f"samples/bin/{arch}/fib", "4"])
    return [s["pc"] for s in user.stops if s["kind"] == BREAKPOINT], result


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_one_stop_per_original_instruction_in_and_out_of_the_copy(arch):
    relocated, result = _stops(arch, "relocate")
    reference, plain = _stops(arch, "trampoline")
    assert relocated == reference
    assert len(relocated) == 9 + 9 + 4          # fib(4): 9 calls, 4 of them recurse
    assert result.hits == plain.hits == {"uprobe:fib:fib": 9, "uprobe:fib:fib+1": 9}
    assert result.stdout == b"fib(4) = 3\n"
