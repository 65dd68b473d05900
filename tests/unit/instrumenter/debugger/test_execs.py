"""Exec under the US 6,957,421 debugger (instrumenter/debugger/execs.py): with exec events the
process stops before the new program's first instruction, naming its file, and the old image's
breakpoints are gone; without them the same addresses are set again in the new image."""
import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import BREAKPOINT, EXEC, EXITED, INITIAL
from tests.unit.instrumenter.debugger.test_debugger import ScriptedUser
from trapline import Sandbox


def run_exec_chain(arch, script, tmp_path):
    program = tmp_path / "exec_chain"             # a fixed path: argv[0] is exec'd again
    program.write_bytes(open(f"samples/bin/{arch}/exec_chain", "rb").read())
    program.chmod(0o755)
    user = ScriptedUser(script)

    def attach(kernel, process, session):
        user.debugger = Debugger(kernel.debug, session, on_stop=user.on_stop)
        user.debugger.attach(process)

    result = Sandbox(on_start=attach).run([str(program), "2"])
    return user, result, program


def continue_chain(debugger, event):
    process = event.thread.process
    return debugger.debug.images(process)[0].image.symbols.lookup("continue_chain").addr


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_exec_stops_at_the_new_entry_and_drops_the_old_breakpoints(arch, tmp_path):
    found = {}

    def at_start(debugger, event, seen):
        debugger.report_execs = True
        debugger.insert_breakpoint(continue_chain(debugger, event))   # never reached here
        debugger.resume()

    def at_exec(debugger, event, seen):
        process = event.thread.process
        seen["path"], seen["entry"] = event.path, debugger.debug.images(process)[0].image.entry
        seen["breakpoints"] = set(debugger.breakpoints[process.pid])
        if "bp" not in found:                     # the first exec'd image: break in it
            found["bp"] = continue_chain(debugger, event)
            debugger.insert_breakpoint(found["bp"])
        debugger.resume()

    def go_on(debugger, event, seen):
        debugger.resume()

    user, result, program = run_exec_chain(arch, [at_start, at_exec, go_on, at_exec, go_on],
                                           tmp_path)
    kinds = [s["kind"] for s in user.stops]
    assert kinds == [INITIAL, EXEC, BREAKPOINT, EXEC, EXITED]
    execs = [s for s in user.stops if s["kind"] == EXEC]
    assert all(s["path"] == str(program).encode() for s in execs)
    assert all(s["pc"] == s["entry"] for s in execs)          # before its first instruction
    assert all(s["breakpoints"] == set() for s in execs)      # the old image's are gone
    assert user.stops[2]["pc"] == found["bp"]
    assert b"exec_chain: ok" in result.stdout and result.exit_code == 0


def test_without_exec_events_the_breakpoints_carry_over(tmp_path):
    def at_start(debugger, event, seen):
        debugger.insert_breakpoint(continue_chain(debugger, event))
        debugger.resume()

    def go_on(debugger, event, seen):
        debugger.resume()

    user, result, _ = run_exec_chain("x86_64", [at_start, go_on, go_on], tmp_path)
    assert [s["kind"] for s in user.stops] == [INITIAL, BREAKPOINT, BREAKPOINT, EXITED]
    assert result.exit_code == 0
