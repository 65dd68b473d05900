"""Errors of the instrumenter."""
from emu.errors import TraplineError


class InstrumenterError(TraplineError):
    """A probe that cannot be placed, with the reason."""
