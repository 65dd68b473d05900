"""strace -c / -C: calls, errors and time per syscall, as strace 6.x's table (count.c).

Times are the sandbox's virtual clock's (kernel_model/time/clock.py): the time between a
call's entry and its exit, which is what the guest sleeps or waits in it (the clock's fixed
microsecond per call is charged before the entry stop, so a call that returns at once takes 0).
Rows are sorted by -S's key (time by default), and rows the key ties in the order of their
syscall numbers: strace sorts its per-number table with glibc's qsort, a stable merge sort, so
on the virtual clock, where most calls take 0, the order of numbers shows. A call that never
returns (exit_group) is not counted: strace counts at the exit stop. The name column is as wide
as the longest name and one more, 16 at least (count.c's column widths).

Each ABI has its table, as strace keeps one per personality (count.c call_summary): the
x86-64 calls first, then "System call usage summary for 32 bit mode:" and the i386 ones. The
program's first execve is the x86-64 one: on the reference's x86-64 kernel it is made by
strace's own 64-bit child, before the 32-bit image exists.
"""
from dataclasses import dataclass

from kernel_model.debug.abi import I386_NUMBERS, X86_64_NUMBERS

HEADER = "% time     seconds  usecs/call     calls    errors syscall"
NAME_WIDTH = 16
NUMBERS = {abi: {name: number for number, name in table.items()}
           for abi, table in (("i386", I386_NUMBERS), ("x86_64", X86_64_NUMBERS))}
# -S SORTBY: strace 6.x's keys and their aliases (count.c set_sortby); "nothing": numbers' order
SORT_KEYS = {
    "time": lambda name, row: -row.ns, "time-total": lambda name, row: -row.ns,
    "total-time": lambda name, row: -row.ns,
    "avg-time": lambda name, row: -(row.ns // row.calls),
    "time-avg": lambda name, row: -(row.ns // row.calls),
    "calls": lambda name, row: -row.calls, "count": lambda name, row: -row.calls,
    "errors": lambda name, row: -row.errors, "error": lambda name, row: -row.errors,
    "name": lambda name, row: name, "syscall": lambda name, row: name,
    "syscall-name": lambda name, row: name,
    "nothing": lambda name, row: 0, "none": lambda name, row: 0,
}


@dataclass
class _Row:
    calls: int = 0
    errors: int = 0
    ns: int = 0


PERSONALITY_HEADERS = {"x86_64": "", "i386": "System call usage summary for 32 bit mode:\n"}


class Summary:
    def __init__(self, sort_by: str = "time"):
        self.rows: dict[str, dict[str, _Row]] = {}          # ABI -> name -> counts
        self.sort_key = SORT_KEYS[sort_by]

    def add(self, name: str, failed: bool, ns: int, abi: str = "x86_64") -> None:
        row = self.rows.setdefault(abi, {}).setdefault(name, _Row())
        row.calls += 1
        row.errors += failed
        row.ns += ns

    def table(self) -> str:
        return "".join(PERSONALITY_HEADERS[abi] + self._table(abi, self.rows[abi])
                       for abi in PERSONALITY_HEADERS if abi in self.rows)

    def _table(self, abi: str, rows: dict[str, _Row]) -> str:
        total = _Row(sum(r.calls for r in rows.values()), sum(r.errors for r in rows.values()),
                     sum(r.ns for r in rows.values()))
        numbers = NUMBERS[abi]
        by_number = sorted(rows.items(), key=lambda item: (numbers.get(item[0], 1 << 16), item[0]))
        ordered = sorted(by_number, key=lambda item: self.sort_key(*item))
        width = max([NAME_WIDTH, *(len(name) + 1 for name in rows)])
        rule = "------ ----------- ----------- --------- --------- " + "-" * width
        lines = [HEADER, rule]
        lines += [_line(name, row, total.ns) for name, row in ordered]
        lines += [rule, _line("total", total, total.ns, percent=100.0)]
        return "\n".join(lines) + "\n"


def _line(name: str, row: _Row, total_ns: int, percent: float | None = None) -> str:
    if percent is None:
        percent = 100.0 * row.ns / total_ns if total_ns else 0.0
    seconds = row.ns / 1e9
    per_call = row.ns // 1000 // row.calls if row.calls else 0
    errors = str(row.errors) if row.errors else ""
    return f"{percent:6.2f} {seconds:11.6f} {per_call:11} {row.calls:9} {errors:>9} {name}"
