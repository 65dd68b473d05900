"""Watchpoints in the US 6,957,421 debugger (instrumenter/debugger/watchpoints.py, through the door's
memory hooks): a watched store stops after its instruction with the store done once; the
probe's own stores (a native action's register block on the stack) pass."""
import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import EXITED, INITIAL, SIGNAL, WATCH
from instrumenter.probes.definitions import Probe
from tests.unit.instrumenter.debugger.test_debugger import ScriptedUser
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

TOOL_AREA = b"[uprobes]"


class RecordingDebugger(Debugger):
    """Notes where every watched access came from, and whether it stopped."""
    accesses: list

    def _on_watch(self, thread, pc, address, size, is_write):
        stopped = super()._on_watch(thread, pc, address, size, is_write)
        area = self.debug.area_at(thread.process, pc)
        self.accesses.append((area is not None and area.name == TOOL_AREA, stopped))
        return stopped


def run(arch, script, probes=(), native=None):
    user = ScriptedUser(script)

    def attach(kernel, process, session):
        user.debugger = RecordingDebugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger.accesses = []
        user.debugger.attach(process)

    probes = [Probe(parse_probe_spec(p), native=native) for p in probes]
    result = Sandbox(probes=probes, strategy="trampoline", on_start=attach).run(
        [f"samples/bin/{arch}/fork_probe", "1", "1"])
    return user, result


def symbol(debugger, event, name):
    return debugger.debug.images(event.thread.process)[0].image.symbols.lookup(name).addr


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_a_watched_store_stops_after_its_instruction_once(arch):
    seen = []

    def at_start(debugger, event, s):
        debugger.insert_watchpoint(symbol(debugger, event, "leaf_calls"), 4, "write")
        debugger.resume()

    def at_watch(debugger, event, s):
        if event.kind != WATCH:                   # the SIGCHLD of the fork child: passed on
            debugger.resume(signals={event.thread.tid: event.signal})
            return
        process = event.thread.process
        s["value"] = int.from_bytes(debugger.read_memory(process, event.address, 4), "little")
        seen.append((event.address, s["value"], symbol(debugger, event, "leaf") <= s["pc"]
                     < symbol(debugger, event, "work")))
        debugger.resume()

    user, result = run(arch, [at_start] + [at_watch] * 5)
    assert [s["kind"] for s in user.stops if s["kind"] != SIGNAL] == [INITIAL] + [WATCH] * 4 + [EXITED]
    assert [value for _, value, _ in seen] == [1, 2, 3, 4]   # after the store, done once
    assert all(in_leaf for _, _, in_leaf in seen)
    assert b"parent: work=2 leaf=4" in result.stdout          # no store doubled or lost
    assert b"child: work=1 leaf=2" in result.stdout           # a fork child is not watched


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_the_probes_own_stores_pass(arch):
    """At leaf's probed entry, watch the stack below the red zone, where the probe's trampoline
    saves the registers (--native count) at each hit: those stores pass; a stop, if any, is
    the program's own use of that stack."""
    def at_start(debugger, event, s):
        debugger.insert_breakpoint(symbol(debugger, event, "leaf"))
        debugger.resume()

    def at_leaf(debugger, event, s):
        debugger.remove_breakpoint(symbol(debugger, event, "leaf"))
        sp = debugger.debug.read_register(event.thread, debugger.debug.arch(event.thread.process).sp)
        watch["range"] = (sp - 400, 400 - 128, "access")
        debugger.insert_watchpoint(*watch["range"])
        debugger.resume()

    def go_on(debugger, event, s):
        if event.kind == WATCH:                   # the program's own: enough seen
            debugger.remove_watchpoint(*watch["range"])
        debugger.resume(signals={event.thread.tid: event.signal} if event.kind == SIGNAL else None)

    watch = {}
    user, result = run(arch, [at_start, at_leaf] + [go_on] * 5, probes=["uprobe:fork_probe:leaf"],
                       native="count")
    accesses = user.debugger.accesses
    from_tool = [stopped for tool, stopped in accesses if tool]
    assert len(from_tool) >= 2 and not any(from_tool)         # every hit saved its registers
    assert b"parent: work=2 leaf=4" in result.stdout and result.exit_code == 0
