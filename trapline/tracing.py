"""Output of `trapline trace`: one event per probe hit, as text or JSON Lines, and the
per-probe hit table of `-c`."""
import json
import os
import stat
import sys

from instrumenter.probes.records import Record

from .host_output import guarded
from .native_lines import BLOCK_FORMATTERS


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


def jsonl_lines(rows) -> list[str]:
    """format_jsonl of each buffered row (a Record's fields in order, records.py), without the
    Record: a uprobe's entry or return row (ints, no fields) is one %-format of a template
    made once per probe and argument count (issue 31: the f-string of format_jsonl and the
    Record it needs cost twice as much), anything else the Record's line."""
    lines = []
    append = lines.append
    probe, nargs, template = None, -1, ""
    for row in rows:
        retval, args = row[6], row[5]
        if len(row) > 9 and row[9] or retval is not None and type(retval) is not int:
            append(format_jsonl(Record(*row)))
            continue
        if retval is None:
            retval = "null"
        for value in args:
            if type(value) is not int:
                append(format_jsonl(Record(*row)))
                break
        else:
            if row[3] is not probe or len(args) != nargs:       # a batch is mostly one probe's
                probe, nargs = row[3], len(args)
                template = _jsonl_template(probe, nargs)
            append(template % (row[0], row[1], row[2], row[4], *args, retval))
    return lines


def plain_jsonl_lines(rows) -> list[str]:
    """jsonl_lines of rows known to be plain (StreamSink.put_plain_row's: an entry or return
    row, arguments that are ints, a retval None or an int, no fields), nothing asked of each (issue 31: the
    questions were a fifth of a line's cost, bench/trace_cost.py's format floor)."""
    lines = []
    append = lines.append
    probe, nargs, template = None, -1, ""
    for row in rows:
        args, retval = row[5], row[6]
        if row[3] is not probe or len(args) != nargs:       # a batch is mostly one probe's
            probe, nargs = row[3], len(args)
            template = _jsonl_template(probe, nargs)
        append(template % (row[0], row[1], row[2], row[4], *args,
                           "null" if retval is None else retval))
    return lines


def _jsonl_template(probe: str, nargs: int) -> str:
    """The jsonl line of a plain record of `probe` with `nargs` arguments, its numbers left to
    %d (str of an int, as JSON writes it) and its retval to %s ("null" or the int)."""
    key = (probe, nargs)
    template = _JSONL_TEMPLATES.get(key)
    if template is None:
        template = _JSONL_TEMPLATES[key] = (
            '{"ts":%d,"pid":%d,"tid":%d,"probe":' + _json_string(probe).replace("%", "%%")
            + ',"addr":%d,"args":[' + ",".join(["%d"] * nargs) + '],"retval":%s}')
    return template


_JSONL_TEMPLATES: dict[tuple[str, int], str] = {}


def text_lines(rows) -> list[str]:
    """format_text of each buffered row: an entry or return row without fields is one
    %-format of a template made once per probe, argument count and whether it has a retval
    (%14d, %6d, %#x and %s write ints and names as format_text's f-string does), anything else
    the Record's line."""
    lines = []
    append = lines.append
    probe, nargs, returned, template = None, -1, False, ""
    for row in rows:
        kind = row[7]
        if (kind != "entry" and kind != "return") or len(row) > 9 and row[9]:
            append(format_text(Record(*row)))
            continue
        args, retval = row[5], row[6]
        if row[3] is not probe or len(args) != nargs or (retval is not None) != returned:
            probe, nargs, returned = row[3], len(args), retval is not None
            template = _text_template(probe, nargs, returned)
        if returned:
            append(template % (row[0], row[1], row[2], row[8], *args, retval))
        else:
            append(template % (row[0], row[1], row[2], row[8], *args))
    return lines


def plain_text_lines(rows) -> list[str]:
    """text_lines of rows known to be plain (StreamSink.put_plain_row's: an entry or return
    row without fields), the kind and the fields asked of none."""
    lines = []
    append = lines.append
    probe, nargs, returned, template = None, -1, False, ""
    for row in rows:
        args, retval = row[5], row[6]
        if row[3] is not probe or len(args) != nargs or (retval is not None) != returned:
            probe, nargs, returned = row[3], len(args), retval is not None
            template = _text_template(probe, nargs, returned)
        if returned:
            append(template % (row[0], row[1], row[2], row[8], *args, retval))
        else:
            append(template % (row[0], row[1], row[2], row[8], *args))
    return lines


def _text_template(probe: str, nargs: int, returned: bool) -> str:
    template = "%14d %6d %6d " + probe.replace("%", "%%") + " %s"
    if nargs:
        template += " args=" + ",".join(["%#x"] * nargs)
    return template + (" retval=%s" if returned else "")


ROW_FORMATTERS = {"text": text_lines, "jsonl": jsonl_lines}
# the same for batches of plain rows only (StreamSink.put_plain_row)
PLAIN_ROW_FORMATTERS = {"text": plain_text_lines, "jsonl": plain_jsonl_lines}


class StreamSink:
    """Writes records as they are drained, so events interleave with the guest's output.

    The session hands it every record as it is made, in the order of the run, as a row
    (`put_row`: a Record's fields in order, records.py Buffers streams rows here;
    `put_plain_row` for an entry or return row whose arguments are ints, its retval None or
    an int, without fields, as a uprobe's entry hook makes them from registers and memory) or
    as Records (a call, from a buffer of another capacity). A batch of plain rows only is
    written without a question per row (plain_jsonl_lines, plain_text_lines); one with any
    other row is asked row by row. `batch`: how many records the sink
    keeps before one write. 1 for a terminal, a pipe or the guest's own stdout: each record is
    written before the guest runs on, in program order with its output and before a reader
    that went away stops the run. A file of records alone (`-o FILE`, a regular file or
    /dev/null) takes BATCH records a write: the same bytes with far fewer calls, and the
    lines of a batch made together from the rows (issue 31). `flush()` writes what is kept
    (the Sandbox's at the end of the run, also when the run failed)."""

    BATCH = 4096

    def __init__(self, out, fmt: str, *, batch: int = 1):
        self.out = guarded(out)             # a reader gone: the run stops (host_output.py)
        self.format = FORMATTERS[fmt]
        self._lines_of = ROW_FORMATTERS[fmt]
        self._plain_lines_of = PLAIN_ROW_FORMATTERS[fmt]
        self.batch = batch
        self._rows: list[tuple] = []        # never rebound: put_row appends to this list
        self._asked = False                 # a row of the batch is not known plain
        self.put_row, self.put_plain_row = self._row_takers()
        self._block_of = BLOCK_FORMATTERS[fmt]

    def _row_takers(self):
        """put_row(row), put_plain_row(row): one call, an append and a length a record (the
        hot path of a hit); put_row also marks the batch as one to ask row by row."""
        rows, batch, flush = self._rows, self.batch, self.flush
        append = rows.append

        def put_row(row: tuple) -> None:
            append(row)
            self._asked = True
            if len(rows) >= batch:
                flush()

        def put_plain_row(row: tuple) -> None:
            append(row)
            if len(rows) >= batch:
                flush()
        return put_row, put_plain_row

    def __call__(self, records) -> None:
        rows = self._rows
        for r in records:
            rows.append((r.ts, r.pid, r.tid, r.probe, r.addr, r.args, r.retval, r.kind,
                         r.name, r.fields))
        self._asked = True
        if len(rows) >= self.batch:
            self.flush()

    def put_block(self, ts: int, pid: int, tid: int, probe: str, addr: int, name: str,
                  words: tuple, count: int) -> None:
        """`count` entry records of one native slot collected at once (native_collector.py),
        their args `words` in order: written as one block of lines (native_lines.py), after
        the records taken before them."""
        text = self._block_of(ts, pid, tid, probe, addr, name, words, count)
        rows = self._rows
        if rows:
            text = "\n".join(self._lines_of(rows)) + "\n" + text
            rows.clear()
            self._asked = False
        self.out.write(text)
        self.out.flush()

    def flush(self) -> None:
        rows = self._rows
        if rows:
            lines_of = self._lines_of if self._asked else self._plain_lines_of
            text = "\n".join(lines_of(rows)) + "\n"
            rows.clear()
            self._asked = False
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
