"""The door's part of a detach (kernel_model/debug/detach.py): a fetch fault inside a former
tool range is translated to the original address (and only a fetch: a data access there keeps
its fault), a fork child keeps its parent's ranges, a released space forgets them."""
from types import SimpleNamespace

from kernel_model.debug import DebugInterface


def _process(serial, pid=100):
    return SimpleNamespace(pid=pid, space=SimpleNamespace(serial=serial))


def _fetch(ip):
    return SimpleNamespace(ip=ip, fault_address=ip)


def test_a_fetch_in_a_former_tool_range_resumes_at_the_original_address():
    debug = DebugInterface()
    parent, child, other = _process(1), _process(2, pid=101), _process(3)
    seen = []

    def translate(ip, process):
        seen.append((process.pid, ip))
        return {0x7000: 0x1234}.get(ip)
    debug.keep_stale_range(parent.space, 0x7000, 0x8000, translate)
    frame = _fetch(0x7000)
    assert debug.stale_code_fault(parent, frame) and frame.ip == 0x1234
    assert not debug.stale_code_fault(parent, _fetch(0x7010))          # no original for it
    data = SimpleNamespace(ip=0x1000, fault_address=0x7000)             # a read there, not a jump
    assert not debug.stale_code_fault(parent, data) and data.ip == 0x1000
    assert not debug.stale_code_fault(other, _fetch(0x7000))            # another space
    debug.copy_stale_ranges(parent.space, child.space)                 # fork
    frame = _fetch(0x7000)
    assert debug.stale_code_fault(child, frame) and frame.ip == 0x1234
    assert seen == [(100, 0x7000), (100, 0x7010), (101, 0x7000)]
    debug.forget_stale_ranges(child.space)                             # released
    assert not debug.stale_code_fault(child, _fetch(0x7000))
