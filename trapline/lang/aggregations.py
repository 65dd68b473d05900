"""bpftrace's aggregation functions: the value one map key holds, updated once per hit.

count(), sum(x), avg(x), min(x), max(x), stats(x), hist(x), lhist(x, min, max, step). Each
keeps what bpftrace's per-CPU map values keep (there is one modeled CPU, so no per-CPU
reduction), and says how it prints (maps.py) and how it sorts against the others of its map
(bpftrace sorts a map by value before printing it: src/bpftrace.cpp print_map).

hist's buckets are bpftrace's: (..., 0), [0], [1], then powers of two [2^k, 2^(k+1));
lhist's: (..., min), [min + i*step, min + (i+1)*step), [max, ...). The text is bpftrace
v0.23.0's (src/output.cpp; later releases print stats as a record and labels differently).
"""


class Count:
    __slots__ = ("value",)
    name = "count"

    def __init__(self):
        self.value = 0

    def add(self, _value=None) -> None:
        self.value += 1

    def sort_key(self):
        return self.value

    def text(self) -> str:
        return str(self.value)


class Sum(Count):
    __slots__ = ()
    name = "sum"

    def add(self, value) -> None:
        self.value += value


class Min(Count):
    __slots__ = ("seen",)
    name = "min"

    def __init__(self):
        super().__init__()
        self.seen = False

    def add(self, value) -> None:
        if not self.seen or value < self.value:
            self.value, self.seen = value, True


class Max(Min):
    __slots__ = ()
    name = "max"

    def add(self, value) -> None:
        if not self.seen or value > self.value:
            self.value, self.seen = value, True


class Avg:
    __slots__ = ("count", "total")
    name = "avg"

    def __init__(self):
        self.count = self.total = 0

    def add(self, value) -> None:
        self.count += 1
        self.total += value

    @property
    def average(self) -> int:
        # C's integer division truncates toward zero (bpftrace divides int64s)
        if not self.count:
            return 0
        quotient = abs(self.total) // self.count
        return quotient if self.total >= 0 else -quotient

    def sort_key(self):
        return self.average

    def text(self) -> str:
        return str(self.average)


class Stats(Avg):
    """Sorted by its average, as avg (src/bpftrace.cpp print_map sorts both by avg_value)."""
    __slots__ = ()
    name = "stats"

    def text(self) -> str:
        return f"count {self.count}, average {self.average}, total {self.total}"


class Hist:
    """Power-of-two histogram; bucket 0 holds the negative values, 1 the zeros, 2 the ones,
    k >= 3 the values in [2^(k-2), 2^(k-1))."""
    __slots__ = ("buckets",)
    name = "hist"

    def __init__(self):
        self.buckets: dict[int, int] = {}

    @staticmethod
    def bucket_of(value: int) -> int:
        if value < 0:
            return 0
        if value == 0:
            return 1
        return value.bit_length() + 1

    def add(self, value) -> None:
        index = self.bucket_of(value)
        self.buckets[index] = self.buckets.get(index, 0) + 1

    def sort_key(self):
        return sum(self.buckets.values())

    def label(self, index: int) -> str:
        if index == 0:
            return "(..., 0)"
        if index == 1:
            return "[0]"
        if index == 2:
            return "[1]"
        return f"[{_power_label(index - 2)}, {_power_label(index - 1)})"

    def rows(self) -> list[tuple[str, int]]:
        if not self.buckets:
            return []
        low, high = min(self.buckets), max(self.buckets)
        return [(self.label(i), self.buckets.get(i, 0)) for i in range(low, high + 1)]

    def text(self) -> str:
        return bars(self.rows())


class Lhist(Hist):
    __slots__ = ("low", "high", "step")
    name = "lhist"

    def __init__(self, low: int, high: int, step: int):
        super().__init__()
        self.low, self.high, self.step = low, high, step

    def bucket_of(self, value: int) -> int:
        if value < self.low:
            return 0
        if value >= self.high:
            return (self.high - self.low) // self.step + 1
        return (value - self.low) // self.step + 1

    def label(self, index: int) -> str:
        step = self.step
        if index == 0:
            return f"(..., {_linear_label(self.low, step)})"
        if index == (self.high - self.low) // step + 1:
            return f"[{_linear_label(self.high, step)}, ...)"
        start = (index - 1) * step + self.low
        return f"[{_linear_label(start, step)}, {_linear_label(start + step, step)})"


def bars(rows: list[tuple[str, int]]) -> str:
    """bpftrace's histogram lines: the label left in 16 columns, the count right in 8, and a
    bar of '@' scaled to 52 columns for the largest count (src/output.cpp hist_to_str)."""
    if not rows:
        return ""
    top = max(count for _, count in rows) or 1
    return "".join(f"{label:<16}{count:>8} |{'@' * int(count / top * 52):<52}|\n"
                   for label, count in rows)


def _power_label(power: int) -> str:
    """2^power as bpftrace writes a bucket bound: the power of 1024 as a suffix K, M, G, T, P, E
    (src/output.cpp hist_index_label)."""
    decade = power // 10
    return f"{1 << (power - 10 * decade)}{' KMGTPE'[decade].strip()}"


def _linear_label(number: int, step: int) -> str:
    """lhist's bounds: with a step that is a multiple of 1024, 1M and 1K multiples are
    shortened; with any other step every bound is written out (src/output.cpp
    lhist_index_label, tests/output.cpp lhist_no_suffix and lhist_suffix)."""
    if step % 1024 or number == 0:
        return str(number)
    if number % (1 << 20) == 0:
        return f"{number >> 20}M"
    if number % 1024 == 0:
        return f"{number >> 10}K"
    return str(number)


AGGREGATIONS = {"count": Count, "sum": Sum, "avg": Avg, "min": Min, "max": Max,
                "stats": Stats, "hist": Hist, "lhist": Lhist}
# the arguments each takes (lhist's bounds and step are literals, checked by checks.py)
AGGREGATION_ARITY = {"count": 0, "sum": 1, "avg": 1, "min": 1, "max": 1, "stats": 1,
                     "hist": 1, "lhist": 4}
