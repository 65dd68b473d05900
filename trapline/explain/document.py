"""One explanation as data: what `trapline explain` prints as text and as JSON.

Every technique builds a Document (a plain dict, the shape of schema/explain.schema.json) and
the text is rendered from it here, so the two formats cannot disagree: the JSON holds every
fact the text shows, each in a field of its own (addresses as numbers, bytes as hex), and the
text is only those facts laid out for a terminal.

A document: a title, then sections; a section: an optional title, then items. An item is one
of a few kinds, each rendered on one line:
  text      a sentence
  insn      an instruction of a listing: address, bytes, assembly, what it is there for
  bytes     bytes at an address before and after something (a patch, a restore, a backpatch)
  event     one step of a timeline: when (guest instructions run), which thread, what it did,
            the bytes at the probed site then, whether a hit was lost there
  register  a register before and after (what a handler changed)
  step      one instruction of a hit followed step by step (steps.py): its number, thread,
            address, bytes, assembly, where it is, and what it changed (registers, a watched
            word, the stack and memory words it wrote)
  area      a mapped area of the process (as /proc/PID/maps shows it) and what lies there
  row       a fact of the techniques that predate this module (emulate, trampoline, relocate,
            detach): its fields, laid out as they printed it before (rows.py)
Those four techniques build their documents with `from_lines` from their lines and rows: a
`=== X ===` line is a heading, another line a text item, a row stays a row.
"""
from __future__ import annotations

import json

FORMAT = "trapline-explain"
VERSION = 1
INDENT = "   "


def document(technique: str, arch: str, title: str, sections: list[dict], **facts) -> dict:
    """The document; `facts` are technique-specific summary values (exit status, hits...)."""
    return {"format": FORMAT, "version": VERSION, "technique": technique, "arch": arch,
            "title": title, "sections": sections, "facts": dict(facts)}


def section(title: str | None, items: list[dict]) -> dict:
    return {"title": title, "items": items}


def text(line: str) -> dict:
    return {"kind": "text", "text": line}


def insn(address: int, raw: bytes, asm: str, note: str = "") -> dict:
    return {"kind": "insn", "address": address, "bytes": raw.hex(), "asm": asm, "note": note}


def patch(address: int, before: bytes, after: bytes, note: str = "") -> dict:
    return {"kind": "bytes", "address": address, "before": before.hex(), "after": after.hex(),
            "note": note}


def event(at: int, tid: int | None, what: str, *, site: bytes | None = None, lost: bool = False) -> dict:
    return {"kind": "event", "at": at, "tid": tid, "what": what,
            "site_bytes": None if site is None else site.hex(), "lost": lost}


def register(name: str, before: int, after: int, note: str = "") -> dict:
    return {"kind": "register", "name": name, "before": before, "after": after, "note": note}


def area(start: int, end: int, perms: str, name: str, note: str = "") -> dict:
    return {"kind": "area", "start": start, "end": end, "perms": perms, "name": name,
            "note": note}


def from_lines(technique: str, arch: str, lines: list, **facts) -> dict:
    """A document of an older technique's lines and rows (rows.row): `=== X ===` lines are the
    title and section headings, every other line a text item (rendered back unchanged), a row
    an item of its own."""
    title, sections = None, []
    for line in lines:
        heading = line[4:-4] if isinstance(line, str) and line.startswith("=== ") \
            and line.endswith(" ===") else None
        if heading is not None and title is None:
            title = heading
            sections.append(section(None, []))
        elif heading is not None:
            sections.append({"title": heading, "items": [], "banner": True})
        else:
            if not sections:
                sections.append(section(None, []))
            sections[-1]["items"].append(text(line) if isinstance(line, str) else line)
    return document(technique, arch, title or technique, sections, **facts)


# ---- text -------------------------------------------------------------------------------------
def render_text(doc: dict) -> str:
    out = [f"=== {doc['title']} ==="]
    for sec in doc["sections"]:
        banner = sec.get("banner", False)
        indent = "" if sec["title"] is None or banner else INDENT
        if sec["title"] is not None:
            out.append(f"=== {sec['title']} ===" if banner else sec["title"])
        out += [indent + _item_line(item) for item in sec["items"]]
    return "\n".join(out) + "\n"


def _item_line(item: dict) -> str:
    kind = item["kind"]
    if kind == "text":
        return item["text"]
    if kind == "insn":
        note = f"  ; {item['note']}" if item["note"] else ""
        return f"{item['address']:#x}  {spaced(item['bytes']):<24} {item['asm']}".rstrip() + note
    if kind == "bytes":
        note = f"  ({item['note']})" if item["note"] else ""
        return f"{item['address']:#x}: {spaced(item['before'])} -> {spaced(item['after'])}{note}"
    if kind == "event":
        site = f"  [site: {spaced(item['site_bytes'])}]" if item["site_bytes"] is not None else ""
        lost = "   <== LOST: no probe saw this execution" if item["lost"] else ""
        who = f"tid {item['tid']}" if item["tid"] is not None else "tool"
        return f"t={item['at']:<9} {who}: {item['what']}{site}{lost}"
    if kind == "register":
        note = f"  ({item['note']})" if item["note"] else ""
        return f"{item['name']}: {item['before']:#x} -> {item['after']:#x}{note}"
    if kind == "step":
        return _step_line(item)
    if kind == "area":
        note = f"  ({item['note']})" if item["note"] else ""
        return f"{item['start']:08x}-{item['end']:08x} {item['perms']} {item['name']}{note}"
    if kind == "row":
        from .rows import row_line
        return row_line(item)
    raise ValueError(f"unknown item kind {kind!r}")


def _step_line(item: dict) -> str:
    where = f" <{item['where']}>" if item["where"] else ""
    head = f"step {item['n']:<3} tid {item['tid']}  {item['address']:#x}{where}: {item['asm']}"
    if item["last"]:
        return head + "   (back in the original code: the hit is over)"
    changed = ", ".join(f"{c['name']} {c['before']:#x} -> {c['after']:#x}" for c in item["changes"])
    return head + (f"   => {changed}" if changed else "")


def spaced(hexbytes: str) -> str:
    return " ".join(hexbytes[i:i + 2] for i in range(0, len(hexbytes), 2))


def schema() -> dict:
    """The JSON Schema of a document, shipped as package data (setup.cfg package_data)."""
    from importlib.resources import files
    return json.loads((files("trapline.explain") / "schema" / "explain.schema.json").read_text())


def render_json(doc: dict) -> str:
    """Sorted keys and a fixed indent: the same document gives the same bytes."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
