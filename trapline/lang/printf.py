"""printf's format strings, as bpftrace takes them (C's printf conversions with its flags,
width and precision; length modifiers h, l, ll, z, j accepted and ignored since every integer
is 64 bits): %d %i %u %x %X %o %c %s %p %%, checked against the arguments before the run."""
import re

_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<precision>\d+))?"
                         r"(?P<length>hh|h|ll|l|z|j|t)?(?P<kind>[diuxXocsp%])")
MASK64 = (1 << 64) - 1


class FormatError(ValueError):
    pass


def conversions(fmt: str) -> list[str]:
    """The conversion letters of `fmt` that take an argument, in order; FormatError for a '%'
    that starts none."""
    kinds, position = [], 0
    for match in re.finditer(r"%", fmt):
        if match.start() < position:
            continue
        found = _CONVERSION.match(fmt, match.start())
        if found is None:
            raise FormatError(f"bad conversion at {fmt[match.start():match.start() + 4]!r}")
        position = found.end()
        if found["kind"] != "%":
            kinds.append(found["kind"])
    return kinds


def format_printf(fmt: str, values: list) -> str:
    return compile_format(fmt)(values)


def compile_format(fmt: str):
    """`fmt` made once into a function of the values (printf runs on every hit)."""
    pieces, position = [], 0            # literal text, or (spec, kind) of a conversion
    for found in _CONVERSION.finditer(fmt):
        pieces.append(fmt[position:found.start()])
        position = found.end()
        kind = found["kind"]
        if kind == "%":
            pieces.append("%")
            continue
        spec = f"%{found['flags']}{found['width']}" + \
            (f".{found['precision']}" if found["precision"] is not None else "")
        pieces.append((spec, kind))
    pieces.append(fmt[position:])
    if not any(isinstance(piece, tuple) for piece in pieces):
        text = "".join(pieces)
        return lambda values: text
    # One %-template for the whole line, each conversion a "%s" filled by its converter: a
    # line is then one `%` operation (a loop over the pieces, a list and a join cost about
    # 0.4 us of a printf hit's ~5, bench/lang_rate.py).
    template = "".join(piece.replace("%", "%%") if piece.__class__ is str else "%s" for piece in pieces)
    converters = [_converter(*piece) for piece in pieces if piece.__class__ is not str]
    if len(converters) == 1:
        (only,) = converters
        return lambda values: template % (only(values[0]),)

    def formatted(values) -> str:
        return template % tuple([convert(value) for convert, value in zip(converters, values)])
    return formatted


def _converter(spec: str, kind: str):
    if spec == "%" and kind in "di":
        def plain_integer(value) -> str:
            if value.__class__ is int and -(1 << 63) <= value < 1 << 63:
                return str(value)                   # the common case, at once
            return _convert(spec, kind, value)
        return plain_integer
    return lambda value: _convert(spec, kind, value)


def _convert(spec: str, kind: str, value) -> str:
    if kind == "d" and spec == "%" and value.__class__ is int and -(1 << 63) <= value < 1 << 63:
        return str(value)                   # the common case, at once
    if kind == "s":
        return (spec + "s") % (value if isinstance(value, str) else _text(value))
    if kind == "c":
        return (spec + "c") % chr(value & 0xff if isinstance(value, int) else ord(str(value)[:1] or "\0"))
    number = value if isinstance(value, int) else 0
    if kind in "di":
        return (spec + "d") % _signed64(number)
    if kind == "u":
        return (spec + "d") % (number & MASK64)
    if kind == "p":
        return (spec + "s") % f"{number & MASK64:#x}"
    return (spec + kind) % (number & MASK64)


def _signed64(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def _text(value) -> str:
    from .maps import value_text
    return value_text(value)
