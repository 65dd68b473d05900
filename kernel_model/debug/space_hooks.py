"""Per-address-space hook objects of the door (code breakpoints, watchpoints: emu/ hooks on a
space's Machine), keyed on `space.serial`. A hook belongs to the Machine it was made on: when
the space runs on another one (exec gave it a new Machine), the next `hook` makes a new one.

One table is one part's state; the code-breakpoint table is shared, on purpose and explicitly,
by run control (run.py, which places the breakpoints) and the code aliases (code_aliases.py,
which carry them into a tool's copies of the code).
"""


class SpaceHooks:
    def __init__(self):
        self._hooks: dict = {}                 # space.serial -> object with a `machine`

    def hook(self, space, make):
        """The hook of `space`, made by `make(machine)` when there is none or it belongs to a
        Machine the space no longer runs on."""
        hook = self._hooks.get(space.serial)
        if hook is None or hook.machine is not space.machine:
            hook = self._hooks[space.serial] = make(space.machine)
        return hook

    def get(self, space):
        """The hook of `space` as it is, or None."""
        return self._hooks.get(space.serial)

    def pop(self, space):
        """Forget `space`'s hook; returns it (None if it had none)."""
        return self._hooks.pop(space.serial, None)
