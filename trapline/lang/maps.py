"""A consumer's @maps and how bpftrace prints them.

A map holds, per key (a tuple of ints and strings; () for `@x`), either a plain value (an int
or a string, set by `@x = v`) or an aggregation (aggregations.py). At the end of the run (and
on `print(@x)`) a map prints as bpftrace v0.23.0's text output does (src/output.cpp,
src/bpftrace.cpp print_map): one `@name[k1, k2]: value` line a key, sorted by value, ascending
(avg and stats by their average; keys with equal values in key order, so that the output is
the same every run), then a newline; an avg or stats map ends with one more (TextOutput::
map_stats); a histogram prints as `@name[key]:` and its bars, keys apart by an empty line,
and one more newline after the last (TextOutput::map_hist, map_key_val). At the end of the
run, two newlines come first (src/run_bpftrace.cpp), then the maps in the order of their names.
"""
from .aggregations import Avg, Hist, Stats


class Map:
    __slots__ = ("name", "values")

    def __init__(self, name: str):
        self.name = name
        self.values: dict = {}

    def __len__(self) -> int:
        return len(self.values)

    def key_text(self, key: tuple) -> str:
        if not key:
            return self.name
        return f"{self.name}[{', '.join(value_text(part) for part in key)}]"

    def sorted_items(self) -> list:
        def order(item):
            key, value = item
            rank = value.sort_key() if hasattr(value, "sort_key") else value
            return (_sortable(rank), tuple(_sortable(part) for part in key))
        return sorted(self.values.items(), key=order)

    def text(self, top: int = 0, divisor: int = 1) -> str:
        """The map's entries as bpftrace prints them, without the newlines that end it."""
        items = self.sorted_items()
        if top:
            items = items[-top:]
        if any(isinstance(value, Hist) for _, value in items):
            return "\n".join(f"{self.key_text(key)}:\n{value.text()}" for key, value in items).rstrip("\n")
        return "\n".join(f"{self.key_text(key)}: {_value_text(value, divisor)}" for key, value in items)

    def printed(self, top: int = 0, divisor: int = 1) -> str:
        """The map as print_map writes it (module docstring): its text and the newlines after."""
        items = list(self.values.values())
        if any(isinstance(value, Hist) for value in items):
            return self.text(top, divisor) + "\n\n"
        stats = any(isinstance(value, Avg) for value in items)
        return self.text(top, divisor) + ("\n\n" if stats else "\n")


def value_text(value) -> str:
    """A plain value or key part as bpftrace prints it: numbers in decimal, strings bare,
    tuples in parentheses."""
    if isinstance(value, tuple):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)


def _value_text(value, divisor: int) -> str:
    """print(@m, top, divisor): a count, sum, min, max or plain integer divided, an avg's or
    stats' average divided (src/output.cpp map_stats_contents: stats.avg / div), as C
    divides integers (toward zero)."""
    if isinstance(value, Avg):
        shown = _divided(value.average, divisor)
        if isinstance(value, Stats):
            return f"count {value.count}, average {shown}, total {value.total}"
        return str(shown)
    if hasattr(value, "sort_key"):
        if divisor != 1 and hasattr(value, "value"):
            return str(_divided(value.value, divisor))
        return value.text()
    if isinstance(value, int) and divisor != 1:
        return str(_divided(value, divisor))
    return value_text(value)


def _divided(number: int, divisor: int) -> int:
    quotient = abs(number) // abs(divisor)
    return quotient if (number >= 0) == (divisor > 0) else -quotient


def _sortable(value):
    """Ints before strings, each in its own order (keys of mixed kinds never compare)."""
    if isinstance(value, tuple):
        return (2, tuple(_sortable(v) for v in value))
    if isinstance(value, (str, bytes)):
        return (1, value_text(value))
    return (0, value)


class Maps:
    """The maps of one consumer, by name."""

    def __init__(self):
        self.by_name: dict[str, Map] = {}

    def get(self, name: str) -> Map:
        found = self.by_name.get(name)
        if found is None:
            found = self.by_name[name] = Map(name)
        return found

    def text_at_exit(self) -> str:
        """The two newlines bpftrace starts its exit with, then every map, in name order
        (a cleared map too: an empty line, as bpftrace prints a map without keys)."""
        return "\n\n" + "".join(self.by_name[name].printed() for name in sorted(self.by_name))
