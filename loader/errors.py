"""Errors of the loader."""
from emu.errors import TraplineError


class LoaderError(TraplineError):
    """A file that cannot be loaded; the message is one line that says why."""
