"""kernel_model/debug/code_aliases.py: a code breakpoint at an original address reaches every
alias a tool registered for it (before or after the breakpoint), hits report the original,
a freed copy takes its hooks away, and a pass lets a thread through one alias once."""
from types import SimpleNamespace

from kernel_model.debug.code_aliases import CodeAliases
from kernel_model.debug.space_hooks import SpaceHooks


class _Hooks(set):
    machine = None                  # the space's (a stand-in without a Machine)

    def add(self, address):
        super().add(address)

    def remove(self, address):
        self.discard(address)


class _Door(CodeAliases):
    def __init__(self):
        self.hooks = SpaceHooks()                           # shared with debug/run.py in the door
        super().__init__(self.hooks)

    def add_code_breakpoint(self, space, address):        # debug/run.py's part of it
        hooks = self.hooks.hook(space, lambda machine: _Hooks())
        hooks.add(address)
        for alias in self.code_aliases_of(space, address):
            hooks.add(alias)


SPACE = SimpleNamespace(serial=7, machine=None)


def _thread(tid=1):
    return SimpleNamespace(tid=tid, process=SimpleNamespace(space=SPACE))


def test_breakpoint_before_or_after_the_alias():
    door = _Door()
    door.register_code_alias(SPACE, 0x9000, 0x1000)
    door.add_code_breakpoint(SPACE, 0x1000)
    door.register_code_alias(SPACE, 0x9100, 0x1000)                 # a newer copy
    door.register_code_alias(SPACE, 0x9004, 0x1004)                 # no breakpoint there
    assert door.hooks.get(SPACE) == {0x1000, 0x9000, 0x9100}
    assert door.code_alias_original(SPACE, 0x9100) == 0x1000
    assert door.code_alias_original(SPACE, 0x1004) == 0x1004
    door.unregister_code_aliases(SPACE, [0x9000, 0x9004])           # the old copy is freed
    assert door.hooks.get(SPACE) == {0x1000, 0x9100}
    assert door.code_aliases_of(SPACE, 0x1000) == [0x9100]


def test_a_pass_is_for_the_next_check_only():
    door = _Door()
    door.register_code_alias(SPACE, 0x9000, 0x1000)
    door.pass_code_alias_once(_thread(), 0x9000)                     # not hooked: no pass
    assert not door.code_alias_passes(_thread(), 0x9000)
    door.add_code_breakpoint(SPACE, 0x1000)
    door.pass_code_alias_once(_thread(), 0x9000)
    assert not door.code_alias_passes(_thread(2), 0x9000)            # another thread stops
    assert door.code_alias_passes(_thread(), 0x9000)
    assert not door.code_alias_passes(_thread(), 0x9000)             # once
    door.pass_code_alias_once(_thread(), 0x9000)
    assert not door.code_alias_passes(_thread(), 0x1000)             # used up elsewhere
    assert not door.code_alias_passes(_thread(), 0x9000)
    door.pass_code_alias_once(_thread(), 0x9000)
    door.forget_code_aliases(SPACE)
    assert not door.code_alias_passes(_thread(), 0x9000)
    assert door.code_alias_original(SPACE, 0x9000) == 0x9000
