"""`trapline explain --technique handler` (trapline/explain/handler.py): limit_n.s in the
trampoline page, the first hit followed through save, call, the handler, restore, copy and
jump, and what it changed: rdi on x86-64, the argument word on the stack on i386."""
import pytest

from trapline.explain.handler import explain_handler

pytestmark = pytest.mark.e2e
BLOCKS = ["fib", "Save_Registers", "Call_User_BreakpointHandler", "User_BreakpointHandler",
          "Restore_Registers", "OriginalInstruction_Copy", "Jump_NextInstruction", "fib+0x1"]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_hit_runs_save_call_handler_restore_copy_jump_and_n_becomes_5(arch):
    doc = explain_handler(arch)
    steps = [i for i in doc["sections"][2]["items"] if i["kind"] == "step"]
    order = []
    for s in steps:          # the blocks in the order the thread first ran them (x86-64 goes
        if s["where"] not in order:           # back to the call block after the handler's ret)
            order.append(s["where"])
    assert order == BLOCKS
    assert steps[0]["asm"] == "int3" and steps[-1]["last"]
    changed = [i for i in doc["sections"][3]["items"] if i["kind"] == "register"]
    [n] = changed
    assert (n["before"], n["after"]) == (10, 5)
    assert n["name"] == "rdi" if arch == "x86_64" else n["name"].startswith("memory 0x")
    assert doc["facts"]["output"] == "fib(10) = 5" and doc["facts"]["hits"] == 15


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_handlers_store_into_the_saved_registers_is_a_step_change(arch):
    """limit_n.s writes 5 into the saved n: that step shows the memory word going to 5."""
    import json
    from click.testing import CliRunner
    from trapline.explain import explain
    doc = json.loads(CliRunner().invoke(explain, ["--technique", "handler", "--arch", arch,
                                                   "--format", "json"]).output)
    steps = [i for s in doc["sections"] for i in s["items"] if i["kind"] == "step"]
    stores = [c for s in steps if s["where"] == "User_BreakpointHandler" for c in s["changes"]
              if c["name"].startswith("[0x")]
    assert [(c["before"], c["after"]) for c in stores] == [(10, 5)]
