"""The rows of the older techniques (rows.py) on an explain page (html.py).

Consecutive rows of one kind are a table whose columns are the kind's fields (addresses in hex,
bytes spaced, areas as /proc/PID/maps names them); an emulation's stack words are also drawn as
an SVG of the stack (US 7,350,196 FIG. 4A-6B): each word before the emulation and before IRET,
side by side, the changed ones marked, the positions relative to the stack pointer on the left.
"""
from __future__ import annotations

from html import escape

from .document import spaced
from .rows import ADDR, ADDRS, AREAS, HEX, ROWS, WORD

ROW_H, POSITION_W, WORD_W = 22, 330, 250


def rows_html(run: list[dict]) -> list[str]:
    out, group = [], []
    for item in run + [None]:
        if group and (item is None or item["of"] != group[0]["of"]):
            out.append(_table(group))
            if group[0]["of"] == "stack-word":
                out.append(_stack_figure(group))
            group = []
        if item is not None:
            group.append(item)
    return out


def _table(group: list[dict]) -> str:
    of = group[0]["of"]
    fields = ROWS[of].fields
    head = "".join(f"<th>{escape(name)}</th>" for name in fields)
    body = "".join("<tr>" + "".join(f"<td class=\"mono\">{escape(_cell(fields[name], item['fields'][name]))}</td>"
                                    for name in fields) + "</tr>" for item in group)
    return f"<table class=\"rows\" data-of=\"{escape(of)}\"><tr>{head}</tr>{body}</table>"


def _cell(kind: dict, value) -> str:
    if value is None:
        return ""
    if kind is ADDR or kind is WORD:
        return f"{value:#x}"
    if kind is HEX:
        return spaced(value)
    if kind is ADDRS:
        return ", ".join(f"{v:#x}" for v in value)
    if kind is AREAS:
        return ", ".join(f"{a['name']} {a['start']:#x}-{a['end']:#x}" for a in value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _stack_figure(group: list[dict]) -> str:
    """Highest address at the top, as the patent's figures draw the stack."""
    words = sorted((item["fields"] for item in group), key=lambda f: -f["address"])
    width = POSITION_W + 2 * WORD_W + 20
    height = ROW_H * (len(words) + 1) + 4
    digits = 2 * words[0]["word"]
    parts = [f"<svg class=\"stack\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} "
             f"{height}\" xmlns=\"http://www.w3.org/2000/svg\">",
             f"<text x=\"{POSITION_W}\" y=\"15\">before emulation</text>",
             f"<text x=\"{POSITION_W + WORD_W + 10}\" y=\"15\">before IRET</text>"]
    for n, f in enumerate(words):
        y = ROW_H * (n + 1)
        changed = f["before"] != f["after"]
        parts.append(f"<text x=\"0\" y=\"{y + 15}\">{escape(f['position'])}</text>")
        for column, (value, label) in enumerate(((f["before"], f["before_is"]),
                                                 (f["after"], f["after_is"]))):
            x = POSITION_W + column * (WORD_W + 10)
            fill = "#ffd6d6" if changed and column == 1 else "#e8f0e8"
            parts.append(f"<rect x=\"{x}\" y=\"{y}\" width=\"{WORD_W}\" height=\"{ROW_H - 2}\" "
                         f"fill=\"{fill}\" stroke=\"#666\"/><text x=\"{x + 4}\" y=\"{y + 15}\">"
                         f"{value:0{digits}x} {escape(label)}</text>")
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>the stack words, highest address first</figcaption></figure>"
