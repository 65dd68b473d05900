"""`trapline trace -f chrome|folded` (issue 18): probe records in the formats people's tools open.

chrome   Chrome's trace-event JSON (`{"traceEvents": [...]}`, what chrome://tracing and Perfetto
         open), streamed as the records come: a function probed at its entry (uprobe BIN:FN)
         and its return (uretprobe BIN:FN) makes duration events, ph B at the entry and ph E at
         the return, on its thread's track; every other record (an entry or return probe
         without its pair, an offset, a system call, a process event, a signal, a profile
         tick) is an instant event (ph i). `ts` is in microseconds of virtual time, 1 ns per
         guest instruction, as in `trapline profile`'s trace.
folded   stackcollapse's folded stacks (`comm;outer;inner count`, what flamegraph.pl and
         speedscope read): each entry hit counted under the stack of paired functions its
         thread is inside, written at the end.

Both know the pairs from the probe specs: only an entry uprobe and a uretprobe on the same
function of the same binary, neither with an offset, nest.
"""
from __future__ import annotations

import json
from collections import Counter

from instrumenter.probes.definitions import URETPROBE, UPROBE

from .host_output import guarded

FORMATS = ("chrome", "folded")


def paired_functions(specs) -> set[tuple[str, str]]:
    """(binary, function) of every function probed both at its entry and at its return."""
    def whole(kind):
        return {(s.binary, s.function) for s in specs
                if s.kind == kind and s.function is not None and not s.offset}
    return whole(UPROBE) & whole(URETPROBE)


class _Pairs:
    """Which records open and close a duration: by the probe text of each record."""

    def __init__(self, specs):
        pairs = paired_functions(specs)
        self.opens = {s.text: s.function for s in specs
                      if s.kind == UPROBE and (s.binary, s.function) in pairs and not s.offset}
        self.closes = {s.text: s.function for s in specs
                       if s.kind == URETPROBE and (s.binary, s.function) in pairs}


class ChromeSink:
    """Streams records as trace events; `close` ends the JSON document."""

    def __init__(self, out, specs):
        self.out, self.pairs, self.started = guarded(out), _Pairs(specs), False

    def __call__(self, records) -> None:
        for record in records:
            self.out.write(self._separator())
            self.out.write(json.dumps(self._event(record), separators=(",", ":")))
        self.out.flush()

    def _separator(self) -> str:
        if self.started:
            return ",\n"
        self.started = True
        return '{"traceEvents":[\n'

    def close(self) -> None:
        if not self.started:
            self.out.write('{"traceEvents":[')
        self.out.write('\n],"displayTimeUnit":"ns","otherData":{"exporter":"trapline trace",'
                       '"clock":"virtual: 1 ns per guest instruction"}}\n')
        self.out.flush()

    def _event(self, record) -> dict:
        event = {"name": record.name or record.probe, "cat": record.probe, "pid": record.pid,
                 "tid": record.tid, "ts": record.ts / 1000}
        if record.probe in self.pairs.opens and record.kind == "entry":
            event.update(ph="B", name=self.pairs.opens[record.probe],
                         args={"args": [f"{a:#x}" for a in record.args]})
        elif record.probe in self.pairs.closes and record.kind == "return":
            event.update(ph="E", name=self.pairs.closes[record.probe], args={"retval": record.retval})
        else:
            event.update(ph="i", s="t", args=_instant_args(record))
        return event


def _instant_args(record) -> dict:
    args = {key: value for key, value in record.fields}
    if record.args:
        args["args"] = [f"{a:#x}" for a in record.args]
    if record.retval is not None:
        args["retval"] = record.retval
    return args


class FoldedSink:
    """Counts entry hits per stack of paired functions; `close` writes the folded lines."""

    def __init__(self, out, specs, comm: str):
        self.out, self.pairs, self.comm = guarded(out), _Pairs(specs), comm
        self.stacks: dict[int, list[str]] = {}          # tid -> paired functions it is inside
        self.counts: Counter = Counter()

    def __call__(self, records) -> None:
        for record in records:
            stack = self.stacks.setdefault(record.tid, [])
            if record.kind == "entry" and record.probe.startswith(UPROBE + ":"):
                function = self.pairs.opens.get(record.probe)
                name = function or record.name or record.probe
                self.counts[";".join([self.comm, *stack, name])] += 1
                if function is not None:
                    stack.append(function)
            elif record.kind == "return" and record.probe in self.pairs.closes:
                _pop(stack, self.pairs.closes[record.probe])

    def close(self) -> None:
        for line in sorted(self.counts):
            self.out.write(f"{line} {self.counts[line]}\n")
        self.out.flush()


def _pop(stack: list[str], function: str) -> None:
    """Leave `function`'s frame (and any above it a longjmp skipped); a return with no entry
    seen (the probe placed while the function ran) changes nothing."""
    if function in stack:
        del stack[len(stack) - 1 - stack[::-1].index(function):]
