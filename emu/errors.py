"""Errors of the machine layer. `TraplineError` is the root of every trapline error."""


class TraplineError(Exception):
    """Root of all errors trapline raises on purpose (bad input, refused requests)."""


class InternalError(Exception):
    """A bug in trapline: a broken invariant, or Unicorn internals not where they were verified.
    Never the user's or the guest's fault, so not a TraplineError: the CLI reports it as a bug
    (exit status 70, trapline/exit_status.py) instead of as a refused request."""


class UnicornInternalsError(InternalError):
    """A field of Unicorn's private state that trapline reads could not be located (the
    installed Unicorn is not the version the layout was verified against)."""


class MachineError(TraplineError):
    """The emulator was asked for something it cannot do (bad mapping, bad register...)."""


class MemoryAccessError(MachineError):
    """A host-side read or write of guest memory touched an unmapped address."""

    def __init__(self, address: int, size: int):
        super().__init__(f"guest memory not mapped at {address:#x} (+{size})")
        self.address = address
