"""Errors of the product layer (CLI, probe specs)."""
from emu.errors import TraplineError


class UsageError(TraplineError):
    """Bad command-line or library usage."""
