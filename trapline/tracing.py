"""Output of `trapline trace`: one event per probe hit, as text or JSON Lines, and the
per-probe hit table of `-c`."""
import json
import os
import stat
import sys

from .host_output import guarded


def format_text(record) -> str:
    """timestamp, pid, tid, probe, then what the record has: one line, fields joined by
    spaces (built as one string: a list and a join a record cost a third more, issue 31)."""
    text = f"{record.ts:>14} {record.pid:>6} {record.tid:>6} {record.probe}"
    kind, args = record.kind, record.args
    if kind == "entry" or kind == "return":
        text += " " + record.name
    if kind == "profile":                   # the interrupted PC; args are the stack, if asked
        text += " " + record.name
        if args:
            text += " stack=" + ",".join([f"{a:#x}" for a in args])
    elif args:
        text += " args=" + ",".join([f"{a:#x}" for a in args])
    if record.retval is not None:
        text += f" retval={record.retval}"
    for key, value in record.fields:
        text += f" {key}={_field_text(value)}"
    return text


def _field_text(value) -> str:
    """An event field in the text format: numbers as they are, strings quoted as JSON does,
    lists of strings (exec's argv) as a JSON list."""
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def format_jsonl(record) -> str:
    """json.dumps(record.as_json(), separators=(",", ":")), byte for byte; a record of plain
    ints without fields (every uprobe hit) is written without building the dict (issue 31:
    the encoder was a third of a record's cost)."""
    if record.fields or type(record.retval) not in _PLAIN:
        return json.dumps(record.as_json(), separators=(",", ":"))
    args = record.args
    for value in args:
        if type(value) is not int:
            return json.dumps(record.as_json(), separators=(",", ":"))
    retval = "null" if record.retval is None else record.retval
    return (f'{{"ts":{record.ts},"pid":{record.pid},"tid":{record.tid},'
            f'"probe":{_json_string(record.probe)},"addr":{record.addr},'
            f'"args":[{",".join(map(str, args))}],"retval":{retval}}}')


_PLAIN = (int, type(None))
_JSON_STRINGS: dict[str, str] = {}


def _json_string(text: str) -> str:
    """`text` as JSON writes it (a probe's spec: a few per run, made once each)."""
    encoded = _JSON_STRINGS.get(text)
    if encoded is None:
        encoded = _JSON_STRINGS[text] = json.dumps(text)
    return encoded


FORMATTERS = {"text": format_text, "jsonl": format_jsonl}


class StreamSink:
    """Writes records as they are drained, so events interleave with the guest's output.

    The session drains every record as it is made, in the order of the run (one buffer of
    capacity 1 per process). `batch`: how many lines the sink keeps before one write. 1 for a
    terminal, a pipe or the guest's own stdout: each record is written before the guest runs
    on, in program order with its output and before a reader that went away stops the run. A
    file of records alone (`-o FILE`, a regular file or /dev/null) takes BATCH lines a write:
    the same bytes with far fewer calls (issue 31). `flush()` writes what is kept (the
    Sandbox's at the end of the run, also when the run failed)."""

    BATCH = 4096

    def __init__(self, out, fmt: str, *, batch: int = 1):
        self.out = guarded(out)             # a reader gone: the run stops (host_output.py)
        self.format = FORMATTERS[fmt]
        self.batch = batch
        self._lines: list[str] = []

    def __call__(self, records) -> None:
        fmt, lines = self.format, self._lines
        for record in records:
            lines.append(fmt(record))
        if len(lines) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            text = "\n".join(self._lines) + "\n"
            self._lines = []
            self.out.write(text)
        self.out.flush()


def batch_for(output) -> int:
    """StreamSink's batch for `-o` OUTPUT (None: stdout)."""
    if output is None or output in (sys.stdout, sys.__stdout__):
        return 1
    try:
        info = os.fstat(output.fileno())
        tty = output.isatty()
    except (OSError, AttributeError, ValueError):
        return 1
    if not stat.S_ISREG(info.st_mode) and not (stat.S_ISCHR(info.st_mode) and not tty):
        return 1
    return 1 if _shares_stdio(info) else StreamSink.BATCH


def _shares_stdio(info) -> bool:
    """OUTPUT is the file the guest's stdout or stderr writes to too (`-o /dev/stdout >FILE`):
    the records must keep their place among its lines. /dev/null shares nothing."""
    if stat.S_ISCHR(info.st_mode):
        return False
    for fd in (1, 2):
        try:
            other = os.fstat(fd)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            return True
    return False


def hit_table(probes, dropped: dict[int, int]) -> str:
    """Hits per probe, and the strategies its sites were placed with (auto's choices)."""
    width = max([len(p.spec.text) for p in probes] + [5])
    lines = [f"{'probe':<{width}}  {'hits':>10}  strategy"]
    lines += [f"{p.spec.text:<{width}}  {p.hits:>10}  {_placed(p)}".rstrip() for p in probes]
    for pid, count in dropped.items():
        lines.append(f"pid {pid}: {count} records dropped (buffer full)")
    return "\n".join(lines)


def _placed(probe) -> str:
    """"jump", or "trampoline x2, emulate" when its sites went different ways."""
    placed = getattr(probe, "chosen", {})
    return ", ".join(name if count == 1 or len(placed) == 1 else f"{name} x{count}"
                     for name, count in placed.items())
