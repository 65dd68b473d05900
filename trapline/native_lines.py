"""The lines of a block of native records, made at once (issue 31: the rate of records kept in
the guest by jump, bench/trace_cost.py).

A native args:N slot (instrumenter/strategies/native.py) keeps its records in the guest: N
words a hit, nothing else. When the collector drains it (native_collector.py), every record
of the block has the same ts (the collection's), pid, tid (0), probe, address and name; only
the words differ. So the line of one record is a constant text with N number fields, and the
block's lines are that line repeated once per record and %-formatted once with the block's
words as they were unpacked, in order: one C-level format for the whole block instead of a
Python-level step per record (tracing.py's row formatters were the floor under the rate:
bench/trace_cost.py's format_floor).

The bytes are those of jsonl_lines and text_lines (tracing.py) for the same rows: %d writes
an int as str() and JSON do, %#x as f"{a:#x}", %14d and %6d as the f-string's :>14 and :>6.
"""
import json


def _literal(text: str) -> str:
    """`text` inside a %-format, as itself."""
    return text.replace("%", "%%")


def jsonl_block(ts: int, pid: int, tid: int, probe: str, addr: int, name: str,
                words: tuple, count: int) -> str:
    """format_jsonl of `count` entry records whose args are `words` taken len(words) // count
    at a time; each line ends with a newline."""
    nargs = len(words) // count if count else 0
    head = _literal(f'{{"ts":{ts},"pid":{pid},"tid":{tid},"probe":{json.dumps(probe)},'
                    f'"addr":{addr},"args":[')
    line = head + ",".join(["%d"] * nargs) + '],"retval":null}\n'
    return (line * count) % words


def text_block(ts: int, pid: int, tid: int, probe: str, addr: int, name: str,
               words: tuple, count: int) -> str:
    """format_text of the same records (an entry record: its name, then args= if it has
    any); each line ends with a newline."""
    nargs = len(words) // count if count else 0
    line = _literal(f"{ts:>14} {pid:>6} {tid:>6} {probe} {name}")
    if nargs:
        line += " args=" + ",".join(["%#x"] * nargs)
    return ((line + "\n") * count) % words


BLOCK_FORMATTERS = {"text": text_block, "jsonl": jsonl_block}
