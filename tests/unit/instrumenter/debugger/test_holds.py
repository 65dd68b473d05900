"""Resuming some threads only (instrumenter/debugger/holds.py): the threads not resumed keep
their registers until the next resume; when the resumed ones wait for a held one, nothing can
run and the user gets an interrupt stop instead of a deadlock (samples/threads.c: 4 workers
meet at a barrier)."""
import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import BREAKPOINT, EXITED, INITIAL, INTERRUPT
from tests.unit.instrumenter.debugger.test_debugger import ScriptedUser
from trapline import Sandbox


def run_threads(arch, script):
    user = ScriptedUser(script)

    def attach(kernel, process, session):
        user.debugger = Debugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger.attach(process)

    result = Sandbox(on_start=attach).run([f"samples/bin/{arch}/threads"])
    return user, result


def worker(debugger, event):
    process = event.thread.process
    return debugger.debug.images(process)[0].image.symbols.lookup("worker").addr


def pcs(debugger):
    return {t.tid: debugger.real_pc(t) for t in debugger.threads()}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_the_threads_not_resumed_stay_where_they_are_until_nothing_can_run(arch):
    seen = {}

    def at_start(debugger, event, s):
        debugger.insert_breakpoint(worker(debugger, event))
        debugger.resume()

    def first_worker(debugger, event, s):
        debugger.remove_breakpoint(worker(debugger, event))
        seen["before"], seen["resumed"] = pcs(debugger), event.thread.tid
        debugger.resume(only=[event.thread])          # it alone: to the barrier, then waits

    def nothing_can_run(debugger, event, s):
        seen["after"], seen["interrupted"] = pcs(debugger), event.thread.tid
        debugger.resume()                             # everyone: the barrier opens

    user, result = run_threads(arch, [at_start, first_worker, nothing_can_run])
    assert [s["kind"] for s in user.stops] == [INITIAL, BREAKPOINT, INTERRUPT, EXITED]
    resumed = seen["resumed"]
    assert seen["interrupted"] == resumed
    others = {tid: pc for tid, pc in seen["before"].items() if tid != resumed}
    assert len(others) == 4 and {tid: seen["after"][tid] for tid in others} == others
    assert seen["after"][resumed] != seen["before"][resumed]
    assert b"threads: ok" in result.stdout and result.exit_code == 0
