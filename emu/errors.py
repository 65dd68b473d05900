"""Errors of the machine layer. `TraplineError` is the root of every trapline error."""


class TraplineError(Exception):
    """Root of all errors trapline raises on purpose (bad input, refused requests)."""


class MachineError(TraplineError):
    """The emulator was asked for something it cannot do (bad mapping, bad register...)."""
