"""The US 6,957,421 debugger as a library (instrumenter/debugger/), without GDB: a scripted user
stops at a breakpoint on a probed function, reads the original bytes under the probe's patch,
steps one original instruction at a time through every strategy's patch, and the probe
records come out as without the debugger."""
import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import BREAKPOINT, EXITED, INITIAL, STEP
from trapline import Sandbox

PUSH_FP = 0x55                  # push %ebp / %rbp: fib's first instruction


class ScriptedUser:
    """on_stop: run the next scripted action; records what each stop showed."""

    def __init__(self, script):
        self.script = list(script)
        self.stops = []
        self.debugger = None

    def on_stop(self, event):
        thread = event.thread
        seen = {"kind": event.kind}
        if thread is not None:
            seen["pc"] = self.debugger.pc(thread)
        self.stops.append(seen)
        if event.kind == EXITED:
            return
        self.script.pop(0)(self.debugger, event, seen)


def run_debugged(arch, script, strategy="trampoline", n=3):
    user = ScriptedUser(script)

    def attach(kernel, process, session):
        debugger = Debugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger = debugger
        debugger.attach(process)

    result = Sandbox(probes=["uprobe:fib:fib"], strategy=strategy, on_start=attach).run(
        [f"samples/bin/{arch}/fib", str(n)])
    return user, result


def fib_address(debugger, event):
    process = event.thread.process
    return debugger.debug.images(process)[0].image.symbols.lookup("fib").addr


@pytest.mark.parametrize("strategy", ["trampoline", "emulate", "emulate-lock", "jump"])
@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_breakpoint_on_a_probed_function_then_two_original_steps(arch, strategy):
    found = {}

    def at_start(debugger, event, seen):
        found["fib"] = fib_address(debugger, event)
        code = debugger.read_memory(event.thread.process, found["fib"], 1)
        found["shown"] = code[0]
        debugger.insert_breakpoint(found["fib"])
        debugger.resume()

    def step(debugger, event, seen):
        debugger.resume(steps=[event.thread])

    def done(debugger, event, seen):
        debugger.remove_breakpoint(found["fib"])
        debugger.resume()

    user, result = run_debugged(arch, [at_start, step, step, done], strategy=strategy)
    fib = found["fib"]
    second = fib + (4 if arch == "x86_64" else 3)        # after push and mov %sp,%bp
    assert found["shown"] == PUSH_FP                      # not the int3, LOCK or jump
    assert [s["kind"] for s in user.stops] == [INITIAL, BREAKPOINT, STEP, STEP, EXITED]
    assert [s["pc"] for s in user.stops[1:4]] == [fib, fib + 1, second]
    assert result.exit_code == 0 and result.hits == {"uprobe:fib:fib": 5}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_records_with_the_debugger_equal_those_without(arch):
    def at_start(debugger, event, seen):
        debugger.insert_breakpoint(fib_address(debugger, event))
        debugger.resume()

    def step(debugger, event, seen):
        debugger.resume(steps=[event.thread])

    def go_on(debugger, event, seen):
        debugger.resume()

    script = [at_start, step, step] + [go_on] * 10
    user, debugged = run_debugged(arch, script, n=4)
    plain = Sandbox(probes=["uprobe:fib:fib"], strategy="trampoline").run(
        [f"samples/bin/{arch}/fib", "4"])
    assert len(debugged.records) == 9
    assert debugged.records == plain.records              # virtual timestamps included
    assert debugged.stdout == plain.stdout


def test_kill_ends_the_run_with_sigkill():
    def at_start(debugger, event, seen):
        debugger.kill()

    user, result = run_debugged("x86_64", [at_start])
    assert result.exit_code == 128 + 9
    assert result.hits == {"uprobe:fib:fib": 0}


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_vfork_child_is_debugged_and_its_parent_cannot_be_resumed_alone(arch):
    from instrumenter.debugger.events import VFORK, VFORK_DONE
    from kernel_model.debug import VforkParentBusy
    refusals = []

    def at_start(debugger, event, seen):
        debugger.report_forks = debugger.report_vforks = True
        debugger.resume()

    def on_event(debugger, event, seen):
        if event.kind != VFORK:
            debugger.resume(signals={event.thread.tid: event.signal} if event.kind == "signal" else None)
            return
        seen["child"] = event.child.pid
        try:
            debugger.resume(only=[event.thread])          # the parent alone
        except VforkParentBusy as refused:
            refusals.append(str(refused))
        debugger.detach_process(event.child.pid)          # then as gdb's detach-on-fork
        debugger.resume()

    user = ScriptedUser([at_start] + [on_event] * 20)

    def attach(kernel, process, session):
        user.debugger = Debugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger.attach(process)

    result = Sandbox(on_start=attach).run([f"samples/bin/{arch}/vfork_status"])
    kinds = [s["kind"] for s in user.stops]
    assert kinds[:3] == [INITIAL, VFORK, VFORK_DONE] and kinds.count(VFORK) == 2
    assert refusals and "waiting for its vfork child 101" in refusals[0]
    assert b"vfork_status: ok" in result.stdout and result.exit_code == 0
