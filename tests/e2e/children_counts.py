"""Per-process call counts: what the child-process samples say they did, and what the probes
recorded for each pid, in the same shape so that a test compares them directly.

A process's counts are a Counter {(function, kind): calls}, kind "entry" or "return". The
samples print the calls of their probed functions per process (samples/README.md, "Child-process
samples"); the records carry the pid of the process that made each hit. Processes are listed in
creation order: the pid of the first record is the traced program, and the kernel hands out pids
in increasing order, so sorting pids puts the children after their parents as they were created.
"""
from __future__ import annotations

import re
from collections import Counter

COUNT_PAIR = re.compile(r"\b([a-z]+)=(\d+)\b")


def recorded_calls(records, kinds=("entry", "return")) -> dict[int, Counter]:
    """{pid: Counter{(function, kind): hits}} from probe records (uprobe specs name the
    function as the last field: ``uprobe:BIN:FUNC``)."""
    per_pid: dict[int, Counter] = {}
    for record in records:
        if record.kind in kinds:
            function = record.probe.rsplit(":", 1)[-1]
            per_pid.setdefault(record.pid, Counter())[(function, record.kind)] += 1
    return per_pid


def in_pid_order(per_pid: dict[int, Counter]) -> list[Counter]:
    return [per_pid[pid] for pid in sorted(per_pid)]


def counts_line(stdout: bytes, who: str) -> Counter:
    """The ``WHO: name=N name=N`` line of a sample's output as Counter{name: N}."""
    line = re.search(rf"^{re.escape(who)}: ((?:[a-z]+=\d+ ?)+)$", stdout.decode(), re.MULTILINE)
    if line is None:
        raise AssertionError(f"no line '{who}: name=N ...' in the output:\n{stdout.decode()}")
    return Counter({name: int(n) for name, n in COUNT_PAIR.findall(line.group(1))})


def as_probe_counts(calls: Counter, functions, kinds=("entry",)) -> Counter:
    """{name: calls} -> {(name, kind): calls} for the probed functions and probe kinds,
    without zero entries (a process that made no call has no record)."""
    return Counter({(f, kind): calls[f] for f in functions for kind in kinds if calls[f]})


def vfork_probe_processes(stdout: bytes) -> list[Counter]:
    """Calls per process of vfork_probe: the parent, vfork child 1, vfork child 2 (before
    its execve and, in the same process, the exec'd image)."""
    return [
        counts_line(stdout, "parent"),
        counts_line(stdout, "vfork child 1"),
        counts_line(stdout, "vfork child 2 before execve") + counts_line(stdout, "exec'd image"),
    ]


def fork_probe_processes(stdout: bytes) -> list[Counter]:
    return [counts_line(stdout, "parent"), counts_line(stdout, "child")]


def vfork_exec_chain_processes(stdout: bytes, levels: int) -> list[Counter]:
    """The process of level K (K < levels) ran first as level K+1's vfork child, then as the
    image of level K; the first process is only the image of level ``levels``."""
    processes = [counts_line(stdout, f"level {levels}")]
    for level in range(levels - 1, -1, -1):
        processes.append(counts_line(stdout, f"level {level + 1}: vfork child before execve")
                         + counts_line(stdout, f"level {level}"))
    return processes
