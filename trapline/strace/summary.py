"""strace -c / -C: calls, errors and time per syscall, as strace 6.x's table (count.c).

Times are the sandbox's virtual clock's (kernel_model/time/clock.py): the time between a
call's entry and its exit, which is what the guest sleeps or waits in it (the clock's fixed
microsecond per call is charged before the entry stop, so a call that returns at once takes 0).
Rows are sorted by time, then by calls, then by name, as strace sorts (-S time) with ties
broken the same way every run.
"""
from dataclasses import dataclass

HEADER = "% time     seconds  usecs/call     calls    errors syscall"
RULE = "------ ----------- ----------- --------- --------- ----------------"


@dataclass
class _Row:
    calls: int = 0
    errors: int = 0
    ns: int = 0


class Summary:
    def __init__(self):
        self.rows: dict[str, _Row] = {}

    def add(self, name: str, failed: bool, ns: int) -> None:
        row = self.rows.setdefault(name, _Row())
        row.calls += 1
        row.errors += failed
        row.ns += ns

    def table(self) -> str:
        total = _Row(sum(r.calls for r in self.rows.values()),
                     sum(r.errors for r in self.rows.values()),
                     sum(r.ns for r in self.rows.values()))
        ordered = sorted(self.rows.items(), key=lambda item: (-item[1].ns, -item[1].calls, item[0]))
        lines = [HEADER, RULE]
        lines += [_line(name, row, total.ns) for name, row in ordered]
        lines += [RULE, _line("total", total, total.ns, percent=100.0)]
        return "\n".join(lines) + "\n"


def _line(name: str, row: _Row, total_ns: int, percent: float | None = None) -> str:
    if percent is None:
        percent = 100.0 * row.ns / total_ns if total_ns else 0.0
    seconds = row.ns / 1e9
    per_call = row.ns // 1000 // row.calls if row.calls else 0
    errors = str(row.errors) if row.errors else ""
    return f"{percent:6.2f} {seconds:11.6f} {per_call:11} {row.calls:9} {errors:>9} {name}"
