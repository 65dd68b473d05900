"""The rows of the four techniques that predate document.py (emulate, trampoline, relocate,
detach): each fact they print is a `row` item, {"kind": "row", "of": NAME, "fields": {...}},
its values in fields of their own (addresses and register values as integers, bytes as hex),
and its line is laid out here from those fields exactly as the techniques printed it before (the
guides and the README show those lines, and the tests compare them).

A row kind is declared once, in ROWS: its fields with their JSON types (the schema's row
definitions are checked against these, tests/unit/trapline/explain/test_rows.py) and the
function that lays the line out. What is prose (headings, the numbered steps' titles) stays a
text item.
"""
from __future__ import annotations

from typing import Callable, NamedTuple


class RowKind(NamedTuple):
    fields: dict[str, dict]            # field -> its JSON Schema (a type, or a $defs reference)
    line: Callable[[dict], str]


def _hex(width: int) -> Callable[[int], str]:
    return lambda value: f"{value:#0{width}x}"


# ---- emulate (trapline/explain/__init__.py describe) ------------------------------------------
def _trap(f):
    return f"{f['vector']} at {f['site']:#x}: `{f['asm']}`   ({f['figure']})"


def _trap_state(f):
    return (f"  CPL {f['cpl']}; the CPU pushed {f['pushed']} {f['stack']}; {f['sp']} before trap = "
            f"{f['sp_before']:#x}, {f['bp']} before trap = {f['bp_before']:#x}")


def _kernel_frame(f):
    return f"  trap frame at {f['address']:#x} (kernel stack):"


def _frame_slot(f):
    word = _hex(2 * f["word"] + 2)
    note = "  (changed by the emulation)" if f["before"] != f["after"] else ""
    return f"    {f['slot']:<10} {word(f['before'])} -> {word(f['after'])}{note}"


def _stack_word(f):
    width = 2 * f["word"]
    word = _hex(width + 2)
    left = f"{word(f['before'])} {f['before_is']}"
    right = f"{word(f['after'])} {f['after_is']}"
    return f"  {f['position']:<52}  {word(f['address'])}  {left:<{width + 26}}{right}".rstrip()


def _iret(f):
    return (f"  handler: {f['bp']} {f['bp_before']:#x} -> {f['bp_after']:#x}; IRET pops from "
            f"{f['frame']:#x}: resumes at {f['resumes_at']:#x} with {f['sp']} = {f['sp_after']:#x}")


# ---- trampoline (trampoline.py) ----------------------------------------------------------------
def _int3_patch(f):
    return (f"{f['address']:#x} <{f['symbol']}>: int3 ({f['after']}) replaces `{f['asm']}` "
            f"({f['before']}) — FIG. 4 block 450")


def _redirect(f):
    return (f"#BP -> the kernel breakpoint handler (FIG. 5 blocks 530-540): kernel mode data (none "
            f"here: the count is native), then saved {f['pc']} {f['saved']:#x} -> {f['to']:#x}")


def _page(f):
    return (f"trampoline page at {f['address']:#x} ({f['size']} bytes, in the process's "
            "[uprobes] mapping):")


def _block(f):
    owner = f" [{f['owner']}]" if f["owner"] else ""
    return f"  {f['name']}{owner}   ({f['role']})"


def _page_insn(f):
    return f"    {f['address']:#x}  {f['bytes']:<24} {f['asm']}".rstrip()


# ---- relocate (relocate.py) ----------------------------------------------------------------
def _relocated(f):
    return (f"1. {f['function']} [{f['start']:#x}, {f['end']:#x}) relocated to {f['copy_start']:#x}-"
            f"{f['copy_end']:#x} (an XOL area, [uprobes]); breakpoints in the original (door "
            "patches, shown unpatched by reads): " + ", ".join(f"{a:#x}" for a in f["breakpoints"]))


def _copy_text(f) -> str:
    if f["address"] is None:
        return ""
    note = f"  ; {f['note']}" if f["note"] else ""
    return f"{f['address']:#x}: {f['asm']}".rstrip() + note


def _copy_insn(f):
    left = "" if f["original"] is None else f"   {f['original']:#x}: {f['original_asm']}"
    return f"{left.ljust(47)[:47]}| {_copy_text(f)}"


def _continuation(f):
    return f"   for {f['original']:#x}: {_copy_text(f)}"


def _pair(original: int, exact: bool) -> str:
    return f"({original:#x}, {'exact' if exact else 'not exact'})"


def _table(f):
    return (f"   relocated_of({f['original']:#x}) = {f['relocated']:#x};  original_of("
            f"{f['relocated']:#x}) = {_pair(f['back'], f['exact'])}")


def _pc_in_copy(f):
    return (f"   the thread's PC {f['pc']:#x} is in the copy: original_of -> "
            f"{_pair(f['original'], f['exact'])}")


def _return_pointer(f):
    return (f"   [{f['slot']:#x}] = {f['value']:#x} <{f['symbol']}> (original): its int3 sends "
            f"this thread back to {f['copy_return']:#x} in the copy")


# ---- detach (detach.py) ------------------------------------------------------------------
HOW = {"exact": "exact: the original instruction has not run yet",
       "after": "after: the original instruction ran, only the jump back was left",
       "landing": "at the landing: the real return address"}


def _areas(areas) -> str:
    return ", ".join(f"{a['name']} {a['start']:#x}-{a['end']:#x}" for a in areas)


def _detach_point(f):
    return (f"detach asked at instruction {f['requested_at']}, done at the same safe point "
            f"({f['done_at']}): between two instructions, outside every hook")


def _tool_areas(f):
    return "tool areas before: " + _areas(f["areas"])


def _thread_moved(f):
    return (f"   tid {f['tid']}: PC {f['tool']:#x} (fib's trampoline) -> {f['original']:#x} "
            f"<{f['symbol']}> [{HOW.get(f['how'], f['how'])}]")


def _return_reset(f):
    return (f"   tid {f['tid']}: [{f['slot']:#x}] {f['tool']:#x} (uretprobe landing) -> "
            f"{f['original']:#x} <{f['symbol']}>  found by {f['found_by']}")


def _restored(f):
    return f"   {f['address']:#x} <{f['symbol']}>: {f['patched']} -> {f['original']}"


def _unmapped(f):
    return (f"4. unmapped: {_areas(f['areas'])}; tool areas after: "
            f"{', '.join(f['left']) or 'none'}")


# The fields' JSON Schema types (the shipped schema's row definitions are these, checked)
I, S, B = {"type": "integer"}, {"type": "string"}, {"type": "boolean"}
ADDR, HEX = {"$ref": "#/$defs/address"}, {"$ref": "#/$defs/hex"}
WORD = {"type": "integer", "minimum": 0, "description": "a machine word (a page shows it in hex)"}
N_I, N_S = {"type": ["integer", "null"]}, {"type": ["string", "null"]}
ADDRS = {"type": "array", "items": ADDR}
NAMES = {"type": "array", "items": S}
AREAS = {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                    "required": ["name", "start", "end"],
                                    "properties": {"name": S, "start": ADDR, "end": ADDR}}}
ROWS: dict[str, RowKind] = {
    "trap": RowKind({"vector": S, "site": ADDR, "asm": S, "figure": S}, _trap),
    "trap-state": RowKind({"cpl": I, "pushed": S, "stack": S, "sp": S, "sp_before": ADDR, "bp": S,
                           "bp_before": ADDR}, _trap_state),
    "kernel-frame": RowKind({"address": ADDR}, _kernel_frame),
    "frame-slot": RowKind({"slot": S, "word": I, "before": WORD, "after": WORD}, _frame_slot),
    "stack-word": RowKind({"position": S, "address": ADDR, "word": I, "before": WORD, "before_is": S,
                           "after": WORD, "after_is": S}, _stack_word),
    "iret": RowKind({"bp": S, "bp_before": WORD, "bp_after": WORD, "frame": ADDR, "resumes_at": ADDR,
                     "sp": S, "sp_after": ADDR}, _iret),
    "int3-patch": RowKind({"address": ADDR, "symbol": S, "asm": S, "before": HEX, "after": HEX},
                          _int3_patch),
    "redirect": RowKind({"pc": S, "saved": ADDR, "to": ADDR}, _redirect),
    "page": RowKind({"address": ADDR, "size": I}, _page),
    "block": RowKind({"name": S, "owner": S, "role": S}, _block),
    "page-insn": RowKind({"address": ADDR, "bytes": HEX, "asm": S}, _page_insn),
    "relocated": RowKind({"function": S, "start": ADDR, "end": ADDR, "copy_start": ADDR,
                          "copy_end": ADDR, "breakpoints": ADDRS}, _relocated),
    "copy-insn": RowKind({"original": N_I, "original_asm": N_S, "address": N_I, "asm": S,
                          "note": S}, _copy_insn),
    "continuation": RowKind({"original": ADDR, "address": N_I, "asm": S, "note": S}, _continuation),
    "table": RowKind({"original": ADDR, "relocated": ADDR, "back": ADDR, "exact": B}, _table),
    "pc-in-copy": RowKind({"pc": ADDR, "original": ADDR, "exact": B}, _pc_in_copy),
    "return-pointer": RowKind({"slot": ADDR, "value": WORD, "symbol": S, "copy_return": ADDR},
                              _return_pointer),
    "detach-point": RowKind({"requested_at": I, "done_at": I}, _detach_point),
    "tool-areas": RowKind({"areas": AREAS}, _tool_areas),
    "thread-moved": RowKind({"tid": I, "tool": ADDR, "original": ADDR, "symbol": S, "how": S},
                            _thread_moved),
    "return-reset": RowKind({"tid": I, "slot": ADDR, "tool": ADDR, "original": ADDR, "symbol": S,
                             "found_by": S}, _return_reset),
    "restored": RowKind({"address": ADDR, "symbol": S, "patched": HEX, "original": HEX}, _restored),
    "unmapped": RowKind({"areas": AREAS, "left": NAMES}, _unmapped),
}


def row(of: str, **fields) -> dict:
    """A row item; its fields must be exactly those ROWS declares for `of`."""
    declared = ROWS[of].fields
    if set(fields) != set(declared):
        raise ValueError(f"row {of}: fields {sorted(fields)} are not {sorted(declared)}")
    return {"kind": "row", "of": of, "fields": fields}


def schema_defs() -> dict:
    """The schema's definitions of the row item and of each row kind's fields."""
    defs = {"row": {
        "description": "A fact of the techniques that predate the other kinds (emulate, "
                       "trampoline, relocate, detach): `of` names its kind, `fields` holds its "
                       "values; the text lays it out as those techniques print it (rows.py).",
        "type": "object", "additionalProperties": False, "required": ["kind", "of", "fields"],
        "properties": {"kind": {"const": "row"}, "of": {"enum": list(ROWS)},
                       "fields": {"type": "object"}},
        "allOf": [{"if": {"properties": {"of": {"const": name}}},
                   "then": {"properties": {"fields": {"$ref": f"#/$defs/row-{name}"}}}}
                  for name in ROWS]}}
    for name, kind in ROWS.items():
        defs[f"row-{name}"] = {"type": "object", "additionalProperties": False,
                               "required": list(kind.fields), "properties": dict(kind.fields)}
    return defs


def row_line(item: dict) -> str:
    return ROWS[item["of"]].line(item["fields"])


def area(name: bytes | str, start: int, end: int) -> dict:
    """A tool area as a row's array element."""
    return {"name": name.decode() if isinstance(name, bytes) else name, "start": start, "end": end}
