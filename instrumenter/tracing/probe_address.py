"""Where a probe goes in a mapped object: FUNC+OFF checked against its symbol's extent, the
error for a function the object lacks, and the program as a mapped object for a space that
records no image map.

It is apart from session.py because it is the address arithmetic of a probe spec, which needs
nothing of the session (Session.resolve_in and attach call it); session.py keeps the placing.
"""
from ..errors import InstrumenterError


def _function_address(image, mapped, spec) -> int:
    """FUNC+OFF: the offset stays inside the function; a symbol of size 0 (gcc's crti.o
    `_init`, musl's `_start`) reaches as far as the code after it runs before the next symbol
    or the end of its section (the boundary check says where its instructions start)."""
    symbol = image.symbols.lookup(spec.function)
    if symbol is None:
        _no_function(spec, mapped)
    if symbol.size:
        if spec.offset >= symbol.size:
            raise InstrumenterError(f"{spec.text}: offset {spec.offset:#x} is past the end of "
                                    f"{spec.function} ({symbol.size} bytes)")
    elif spec.offset and symbol.addr + spec.offset >= _extent(image, symbol):
        extent = _extent(image, symbol) - symbol.addr
        raise InstrumenterError(f"{spec.text}: offset {spec.offset:#x} is past the code of "
                                f"{spec.function} (a symbol of no size, followed by {extent} "
                                "bytes of code before the next symbol or section)")
    return symbol.addr + spec.offset


def _no_function(spec, mapped):
    raise InstrumenterError(f"{spec.text}: no function {spec.function!r} in "
                            f"{mapped.path.decode(errors='replace')}")


class _Program:
    """The program of a process, as a mapped object (for a space that records none)."""
    __slots__ = ("path", "image")

    def __init__(self, process):
        self.path, self.image = process.exe, process.image


def _extent(image, symbol) -> int:
    """Where the code of a symbol of no size ends (insn/code_boundaries.py: capstone, which a
    trace that places no uprobe never imports)."""
    from ..insn.code_boundaries import boundaries_of
    return boundaries_of(image).extent(symbol)
