"""The terminal report of a profile, tprof-style (US 7,823,129): samples per process, thread,
module and function with percentages, as rich tables.
"""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .model import Profile, percent, ranked

TOP_FUNCTIONS = 25


def _table(title: str, columns: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for name, justify in columns:
        # fold, not ellipsis: a narrow terminal must not cut "ld-linux-x86-64.so.2+0x1a2b3"
        # down to a prefix that every unnamed function of the module shares
        table.add_column(name, justify=justify, overflow="fold")
    return table


def _pct(part: int, whole: int) -> str:
    return f"{percent(part, whole):.1f}%"


def tables(profile: Profile, *, top: int = TOP_FUNCTIONS) -> list[Table]:
    total = profile.total
    processes = _table("Processes", [("pid", "right"), ("program", "left"), ("samples", "right"), ("%", "right")])
    for (pid, comm), n in ranked(profile.by_process()):
        processes.add_row(str(pid), comm, str(n), _pct(n, total))
    threads = _table("Threads", [("pid", "right"), ("tid", "right"), ("program", "left"),
                                 ("samples", "right"), ("%", "right")])
    for (pid, tid, comm), n in ranked(profile.by_thread()):
        threads.add_row(str(pid), str(tid), comm, str(n), _pct(n, total))
    modules = _table("Modules", [("module", "left"), ("samples", "right"), ("%", "right")])
    for module, n in ranked(profile.by_module()):
        modules.add_row(module, str(n), _pct(n, total))
    functions = _table(f"Functions (top {top} by self samples)",
                       [("function", "left"), ("module", "left"), ("self", "right"), ("self %", "right"),
                        ("total", "right"), ("total %", "right")])
    totals = profile.total_by_function()
    for (module, name), n in ranked(profile.self_by_function())[:top]:
        inclusive = totals[(module, name)]
        functions.add_row(name, module, str(n), _pct(n, total), str(inclusive), _pct(inclusive, total))
    result = [processes, threads, modules, functions]
    by_line = ranked(profile.self_by_line())
    if by_line:
        lines = _table(f"Lines (top {top} by self samples; DWARF .debug_line)",
                       [("line", "left"), ("function", "left"), ("module", "left"),
                        ("self", "right"), ("self %", "right")])
        for (line, name, module), n in by_line[:top]:
            lines.add_row(line, name, module, str(n), _pct(n, total))
        result.append(lines)
    return result


# Why an event may never come: the sandbox maps memory when a program asks for it (mmap, brk,
# the stack), so the only page faults are those the kernel turns into signals.
NONE_WHY = {"faults": " (memory is mapped when the program asks for it: only faults that "
                      "become signals are page faults here)"}


def heading(profile: Profile) -> str:
    truncated = sum(profile.truncated().values())
    stacks = "PC only" if profile.mode == "pc" else \
        f"stacks unwound (frame pointers and .eh_frame CFI), {truncated} truncated"
    unit = {"insns": "guest instructions", "syscalls": "system calls", "branches": "taken branches",
            "faults": "page faults"}.get(profile.event, profile.event)
    switches = f"; {profile.switches} thread switches" if profile.switches else ""
    if profile.event == "host":
        period = f"one every {profile.interval} µs of host CPU time (host clock, as perf's cpu-clock: " \
                 f"not deterministic, another run takes other samples)"
    else:
        period = f"one every {profile.interval} {unit} (virtual time)"
    # two lines: wrapped at 80 columns, one line read "mode" at its end and "stack:" below
    text = (f"profile: {profile.total} samples, {period}\n"
            f"mode {profile.mode}: {stacks}{switches}")
    if not profile.total and profile.event == "host":
        text += f"\nno sample: the run took less than {profile.interval} µs of host CPU time"
    elif not profile.total:
        text += f"\nno sample: the run had fewer than {profile.interval} {unit}{NONE_WHY.get(profile.event, '')}"
    return text


def print_report(profile: Profile, console: Console, *, top: int = TOP_FUNCTIONS) -> None:
    console.print(heading(profile))
    for table in tables(profile, top=top):
        console.print()
        console.print(table)
    reasons = ranked(profile.truncated())
    if reasons:
        console.print()
        console.print("Truncated stacks (the unwind stopped; nothing was guessed):")
        for reason, n in reasons[:5]:
            console.print(f"  {n:>6}  {reason}")
