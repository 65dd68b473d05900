"""`trapline trace --handler FILE.s | FILE.o:SYMBOL | FILE.so:SYMBOL [--handler-fxsave]`: the user's own handler
code, called inside the guest from each uprobe's trampoline page (US 9,336,001's user breakpoint
handler; instrumenter/strategies/page_layout.py documents the saved-register block it gets)."""
import click


def handler_options(f):
    f = click.option("--handler-fxsave", is_flag=True,
                     help="Save and restore x87/SSE state (FXSAVE) around the --handler call.")(f)
    return click.option("--handler", "handler", default=None, metavar="FILE.s|FILE.o:SYMBOL",
                        help="Call this code (Intel assembly, or a function of a -fPIC object or "
                        "of a shared object) "
                        "with the saved registers at every uprobe hit, inside the guest "
                        "(strategies trampoline, jump, auto).")(f)


def load(handler: str | None, fxsave: bool):
    """The UserHandler for the options, or None; a bad file is a one-line usage error."""
    if handler is None:
        if fxsave:
            raise click.UsageError("--handler-fxsave needs --handler")
        return None
    from instrumenter.errors import InstrumenterError
    from instrumenter.strategies.handlers.user import load_handler

    from ..errors import UsageError
    try:
        return load_handler(handler, fxsave=fxsave)
    except InstrumenterError as e:
        raise UsageError(str(e)) from None
