"""The door's table of tool code (kernel_model/debug/tool_code.py): a fault inside a range a
tool registered is named by the tool; outside it, or once forgotten, it is nobody's."""
from types import SimpleNamespace

from kernel_model.debug import DebugInterface


def _process(serial):
    return SimpleNamespace(space=SimpleNamespace(serial=serial))


def test_faults_in_tool_code_are_named_by_the_tool_and_others_are_not():
    debug = DebugInterface()
    a, b = _process(1), _process(2)
    debug.register_tool_code(a.space, 0x1000, 0x1100, lambda ip: f"handler+{ip - 0x1000:#x}")
    debug.register_tool_code(a.space, 0x2000, 0x2100, lambda ip: None)   # the program's copy
    assert debug.tool_code_fault(a, 0x1012) == "handler+0x12"
    assert debug.tool_code_fault(a, 0x1100) is None
    assert debug.tool_code_fault(a, 0x2010) is None
    assert debug.tool_code_fault(b, 0x1012) is None                       # another space
    debug.unregister_tool_code(a.space, 0x1000)
    assert debug.tool_code_fault(a, 0x1012) is None
    debug.register_tool_code(b.space, 0x1000, 0x1100, lambda ip: "x")
    debug.clear_space(b.space)                                            # space released
    assert debug.tool_code_fault(b, 0x1012) is None
