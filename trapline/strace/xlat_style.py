"""strace's -X raw|abbrev|verbose for every named constant and flag set, not only the ones the
kernel's declarations type (value_formatters.py): the hand-written decoders (ioctl's request,
fcntl's command, st_mode, sigsets, siginfo, socket levels...) name a value through `named`.

strace keeps the style in one global (xlat_verbosity, util.c print_xlat_ex): the client sets
STYLE around each of its handlers (`styled`), so a decoder deep in a structure reads it without
every reader taking it as an argument. -X raw prints the number (strace's own format for it:
hex for flags and commands, decimal for signals, octal for modes), -X verbose the number and
the names in a comment, abbrev (the default) the names.
"""
import functools
from contextvars import ContextVar

from kernel_model.debug.abi import flags, short_signal_name, signal_name

STYLE: ContextVar[str] = ContextVar("strace_xlat_style", default="abbrev")


def named(value: int, names: str, raw: str | None = None) -> str:
    """`names` as the style asks; `raw` is the number's text (hex by default)."""
    style = STYLE.get()
    if style == "abbrev":
        return names
    raw = flags.format_hex(value) if raw is None else raw
    if style == "raw" or names == raw:
        return raw
    return f"{raw} /* {names} */"


def flag_set(value: int, table, zero: str = "0") -> str:
    return named(value, flags.decode_flags(value, table, zero))


def enum(value: int, table, prefix: str) -> str:
    return named(value, flags.decode_enum(value, table, prefix))


def signal(number: int) -> str:
    """SIGCHLD, or with -X raw 17 (strace prints a signal's number in decimal)."""
    return named(number, signal_name(number), str(number))


def short_signal(number: int) -> str:
    """A sigset's member: CHLD, or with -X raw 17."""
    return named(number, short_signal_name(number), str(number))


def file_mode(mode: int) -> str:
    """st_mode: S_IFREG|0644, or with -X raw 0100644 (octal)."""
    return named(mode, flags.decode_file_mode(mode), flags.format_octal(mode))


def styled(style_of):
    """Decorate a client handler: STYLE is `style_of(self)` while it runs."""
    def decorate(handler):
        @functools.wraps(handler)
        def run(self, *args, **kwargs):
            token = STYLE.set(style_of(self))
            try:
                return handler(self, *args, **kwargs)
            finally:
                STYLE.reset(token)
        return run
    return decorate
