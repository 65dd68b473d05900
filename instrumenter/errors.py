"""Errors of the instrumenter."""
from emu.errors import TraplineError


class InstrumenterError(TraplineError):
    """A probe that cannot be placed, with the reason."""


class DecodeError(InstrumenterError):
    """Bytes that are not a complete, valid instruction for the architecture."""


class RelocationRefused(InstrumenterError):
    """An instruction that cannot be executed out of line, with the reason.

    `alternatives` names the strategies that could still probe it ("emulate", "singlestep"),
    so a caller can say what to try instead of only what went wrong.
    """

    def __init__(self, reason: str, alternatives: tuple[str, ...] = ()):
        hint = f" (try: {', '.join(alternatives)})" if alternatives else ""
        super().__init__(reason + hint)
        self.reason = reason
        self.alternatives = tuple(alternatives)


class StrategyError(InstrumenterError):
    """A user's strategy (instrumenter/strategies/registry.py: `package.module:Class` or an
    entry point) that cannot be loaded, does not implement the interface, or broke (raised
    something other than InstrumenterError): one line naming it and the cause."""
