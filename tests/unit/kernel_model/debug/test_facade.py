"""kernel_model/debug/facade.py: the door is a facade over its parts (issue 27). Every public name
the door had when it was one class of 17 mixins is still there, on the class (tools take some
static ones from it: DebugInterface.image_at) and on an instance; each name PARTS forwards is the
part's own method, with its signature and docstring, and reaches that very part."""
import inspect
from types import SimpleNamespace

import pytest

from kernel_model.debug import DebugInterface
from kernel_model.debug.facade import part_class

# dir(DebugInterface) of the mixin class (commit 7486fc7), its public names: the facade must
# keep every one.
MIXIN_CLASS_NAMES = (
    'ABIS', 'EVENTS', 'SIGNAL_PC_STEP', 'add_code_breakpoint', 'add_watchpoint', 'arch',
    'area_at', 'arm_timer', 'at_instruction', 'at_safe_point', 'attach', 'backpatch',
    'breakpoint_at', 'clear_gate', 'clear_space', 'code_addresses_in_use', 'code_alias_original',
    'code_alias_passes', 'code_aliases_of', 'code_breakpoints', 'copy_breakpoints',
    'copy_code_aliases', 'copy_patches', 'copy_restartable', 'copy_stale_ranges',
    'count_instructions', 'cpu', 'current_thread', 'debug_trap_handler', 'deliver_exception',
    'deliver_page_fault', 'detach', 'disarm_timer', 'event_mask', 'exec', 'executable_path',
    'exit', 'forget_code_aliases', 'forget_code_breakpoints', 'forget_cpu', 'forget_patches',
    'forget_restartable', 'forget_signal_frame_pcs', 'forget_stale_ranges', 'forget_tool_code',
    'forget_tool_stop', 'forget_watchpoints', 'fork', 'fork_failed', 'has_patches',
    'hold_signals', 'holds_stopped', 'image_at', 'image_map_version', 'image_mapped',
    'image_unmapped', 'images', 'instruction_alarms', 'instruction_count', 'instructions_retired',
    'interrupt_guest', 'invalid_opcode_site', 'is_alive', 'is_alive_thread', 'is_backpatched',
    'is_suspended', 'keep_stale_range', 'kill_process', 'lift_patch', 'live_processes',
    'live_threads', 'map_pages', 'next_signal', 'pass_code_alias_once', 'patch', 'patch_at',
    'patched_addresses', 'patches_overlapping', 'peek', 'peek_string', 'post_signal', 'pre_fork',
    'processes', 'read_fpu', 'read_memory', 'read_memory_raw', 'read_register',
    'record_tool_stop', 'register_breakpoint', 'register_breakpoint_redirect',
    'register_code_alias', 'register_debug_trap', 'register_invalid_opcode_site',
    'register_restartable', 'register_signal_pc_translator', 'register_tool_code',
    'register_tracer', 'reinsert_patches', 'relay_patch', 'release_signals', 'remove_all_patches',
    'remove_code_breakpoint', 'remove_watchpoint', 'repatch', 'responds', 'restart_sequence',
    'resume', 'resume_from_tracer', 'resume_thread', 'run_controller', 'run_syscall',
    'sequence_to_finish', 'set_event_mask', 'set_gate', 'set_run_controller',
    'set_signal_frame_pc', 'set_signal_mask', 'settle_watch_stop', 'signal', 'signal_frame_built',
    'signal_frame_pc', 'signal_frame_pcs', 'signal_ignored', 'signal_name', 'signal_return_pc',
    'space_released', 'space_threads', 'stack_range', 'stale_code_fault', 'step_thread', 'stop',
    'stop_at_syscall', 'stop_for_tracer', 'subscribe', 'suspend_thread', 'symbolize',
    'syscall_abi', 'syscall_entry', 'syscall_exit', 'syscall_resumed', 'take_signal',
    'thread_can_step', 'thread_instructions', 'thread_name', 'thread_runnable', 'threads',
    'timer_capturing', 'timer_instructions', 'timer_learn', 'timer_ticks', 'tool_code_fault',
    'tool_waits', 'trace_death', 'trace_exec', 'trace_exit', 'trace_fork', 'trace_signal',
    'trace_stop_of', 'trace_vfork_done', 'tracer_of', 'unmap_tool_pages', 'unpatch',
    'unregister_breakpoint', 'unregister_breakpoint_redirect', 'unregister_code_aliases',
    'unregister_invalid_opcode_site', 'unregister_signal_pc_translator', 'unregister_tool_code',
    'unsubscribe', 'vfork', 'vfork_child_of', 'vfork_done', 'virtual_time_ns',
    'watch_syscalls_for', 'write_fpu', 'write_memory', 'write_register',
)
# What the mixin class's __init__ set on an instance, besides.
MIXIN_INSTANCE_NAMES = ("instruction_clock", "subscribers", "syscall_watchers", "tracers")


def _forwarded():
    for (attribute, where), names in DebugInterface.PARTS.items():
        for name in names.split():
            yield attribute, part_class(where), name


def test_the_mixin_class_had_177_public_names():
    assert len(MIXIN_CLASS_NAMES) == 177 and len(set(MIXIN_CLASS_NAMES)) == 177


@pytest.mark.parametrize("name", MIXIN_CLASS_NAMES)
def test_every_public_name_of_the_mixin_class_is_on_the_facade(name):
    assert hasattr(DebugInterface, name)
    assert hasattr(DebugInterface(), name)


def test_the_instance_attributes_follow_the_parts_state():
    door = DebugInterface()
    assert all(hasattr(door, name) for name in MIXIN_INSTANCE_NAMES)
    tool = SimpleNamespace(waits_for=lambda: None, syscall_entry=None, syscall_exit=None)
    door.subscribe(tool)
    door.register_tracer(tool)
    door.syscall_watchers.append(tool)                      # as the tracing session adds itself
    assert tool in door.subscribers and tool in door.tracers and tool in door.syscall_watchers
    door.unsubscribe(tool)          # the events part replaces its lists: the door shows the new
    assert (door.subscribers, door.tracers, door.syscall_watchers) == ([], [], [])
    door.instruction_clock.total = 7
    assert door.instruction_count() == 7                    # the one clock the time part reads


def test_each_name_is_forwarded_once_and_only_from_a_part_that_has_it():
    seen = {}
    for _, part, name in _forwarded():
        assert name not in seen, f"{name}: {seen[name].__name__} and {part.__name__}"
        assert callable(inspect.getattr_static(part, name)), (part.__name__, name)
        seen[name] = part
    assert len(seen) > 150


@pytest.mark.parametrize("attribute,part,name", list(_forwarded()),
                         ids=[name for _, _, name in _forwarded()])
def test_a_forwarded_method_is_the_parts_own(attribute, part, name):
    mine = getattr(DebugInterface, name)
    theirs = getattr(part, name)
    assert inspect.signature(mine) == inspect.signature(theirs)
    assert mine.__doc__ == theirs.__doc__


def test_a_call_reaches_the_part_the_door_holds():
    door = DebugInterface()
    calls = []

    class _Spy:
        def __getattr__(self, name):
            return lambda *args, **kwargs: calls.append((name, args, kwargs)) or "answer"

    for attribute, part, name in _forwarded():
        if isinstance(inspect.getattr_static(part, name), staticmethod):
            continue                     # no state: the part's function itself is the door's
        setattr(door, attribute, _Spy())
        assert getattr(door, name)(1, key=2) == "answer"
        assert calls.pop() == (name, (1,), {"key": 2})


# ---- the parts are made when first asked for (issue 31, start-up) ---------------------------
def _parts_made(door) -> set[str]:
    return {name for name in vars(door) if name in _HOMES}


_HOMES = {attribute for attribute, _ in DebugInterface.PARTS} | set(DebugInterface.OTHER_PARTS)


def _needed(attribute: str) -> set[str]:
    """`attribute` and every part it is made with, and theirs."""
    needed = {attribute}
    for path in DebugInterface.MADE_WITH.get(attribute, ()):
        head = path.split(".")[0]
        if head in _HOMES:
            needed |= _needed(head)
    return needed


def test_a_new_door_has_made_no_part():
    assert _parts_made(DebugInterface()) == set()


@pytest.mark.parametrize("attribute,where", [(a, w) for a, w in DebugInterface.PARTS]
                         + list(DebugInterface.OTHER_PARTS.items()))
def test_a_part_is_made_once_when_first_asked_for_with_what_it_is_made_with(attribute, where):
    door = DebugInterface()
    for name in dict(DebugInterface.PARTS).get(attribute, "").split():
        getattr(door, name)                     # looking a method up makes nothing; calling it does
    assert _parts_made(door) == set()
    part = getattr(door, attribute)
    assert isinstance(part, part_class(where))
    assert _parts_made(door) == _needed(attribute)
    made = {key: vars(door)[key] for key in _parts_made(door)}
    assert getattr(door, attribute) is part
    assert {key: vars(door)[key] for key in _parts_made(door)} == made     # the same objects


def test_a_call_makes_the_part_that_answers_it():
    door = DebugInterface()
    assert door.has_patches(SimpleNamespace(serial=3)) is False
    assert _parts_made(door) == {"_patches"}


def test_the_kernels_events_make_no_part_but_the_events_one():
    door = DebugInterface()
    space, process = SimpleNamespace(serial=1), SimpleNamespace(pid=1)
    door.exec(process, b"/bin/true", [b"true"])
    door.fork(process, process)
    door.vfork_done(process, process)
    door.image_mapped(process, None)
    door.copy_breakpoints(space, space)
    door.exit(process, 0)
    door.space_released(space)
    assert _parts_made(door) == {"_events"}


def test_a_made_part_still_hears_of_the_space_released():
    door = DebugInterface()
    space = SimpleNamespace(serial=7)
    forgotten = []
    door._patches.forget_patches = forgotten.append
    door.space_released(space)
    assert forgotten == [space]


def test_a_part_made_with_another_method_gets_that_parts_method():
    door = DebugInterface()
    assert door._signal_pcs is vars(door)["_signal_pcs"]
    assert {"_detach", "_signal_pcs"} <= _parts_made(door)
