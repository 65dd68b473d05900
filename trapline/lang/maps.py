"""A consumer's @maps and how bpftrace prints them.

A map holds, per key (a tuple of ints and strings; () for `@x`), either a plain value (an int
or a string, set by `@x = v`) or an aggregation (aggregations.py). At the end of the run (and
on `print(@x)`) a map prints as bpftrace's text output does (src/output.cpp): one
`@name[k1, k2]: value` line a key, sorted by value, ascending (src/bpftrace.cpp print_map;
keys with equal values in key order, so that the output is the same every run), a histogram
as `@name[key]: ` and its bars (keys apart by an empty line); then an empty line. Maps print in the order of their names.
"""
from .aggregations import Hist


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
        """The map as bpftrace prints it (without the empty line that follows)."""
        items = self.sorted_items()
        if top:
            items = items[-top:]
        lines = []
        for key, value in items:
            if isinstance(value, Hist):
                lines.append(f"{self.key_text(key)}: \n{value.text().rstrip(chr(10))}")
            else:
                lines.append(f"{self.key_text(key)}: {_value_text(value, divisor)}")
        histograms = any(isinstance(value, Hist) for _, value in items)
        return ("\n\n" if histograms else "\n").join(lines)


def value_text(value) -> str:
    """A plain value or key part as bpftrace prints it: numbers in decimal, strings bare,
    tuples in parentheses."""
    if isinstance(value, tuple):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)


def _value_text(value, divisor: int) -> str:
    if hasattr(value, "sort_key"):
        if divisor != 1 and hasattr(value, "value"):
            return str(int(value.value / divisor))
        return value.text()
    if isinstance(value, int) and divisor != 1:
        return str(int(value / divisor))
    return value_text(value)


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
        """Every map that holds something, in name order, each followed by an empty line
        (src/bpftrace.cpp print_maps), after the empty line bpftrace starts its exit with."""
        shown = [self.by_name[name].text() + "\n\n"
                 for name in sorted(self.by_name) if self.by_name[name].values]
        return "\n" + "".join(shown) if shown else ""
