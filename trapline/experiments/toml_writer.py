"""A small canonical TOML writer for the manifest: the keys in the order given, strings as TOML
basic strings (JSON's escapes are TOML's), so the same data is always the same bytes. Writes what
the manifest holds: scalars, lists of scalars, inline tables of scalars, tables, arrays of tables.
tomllib reads it back (tests/unit/trapline/experiments/test_toml_writer.py).
"""
from __future__ import annotations

import json
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


class Inline(list):
    """A list of tables written inline, where it stands among its table's keys (an array of
    tables would move after them: a sweep's zip group keeps its place in the sweep's order)."""


def dumps(data: dict) -> str:
    lines: list[str] = []
    _table(data, [], lines)
    return "\n".join(lines).strip("\n") + "\n"


def _table(data: dict, path: list[str], lines: list[str]) -> None:
    for key, value in data.items():
        if not _is_table(value) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in data.items():
        if _is_table(value):
            lines += ["", f"[{'.'.join(_key(k) for k in path + [key])}]"]
            _table(value, path + [key], lines)
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{'.'.join(_key(k) for k in path + [key])}]]"]
                _table(item, path + [key], lines)


def _is_table(value) -> bool:
    return isinstance(value, dict) and any(isinstance(v, (dict, list)) and not isinstance(v, Inline)
                                           for v in value.values())


def _is_table_array(value) -> bool:
    return isinstance(value, list) and not isinstance(value, Inline) and bool(value) and all(isinstance(v, dict) for v in value)


def _key(key: str) -> str:
    return key if _BARE.match(key) else _string(key)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes, but the text as UTF-8 (JSON's \\u escapes of a
    character outside the BMP are surrogate pairs, which TOML rejects) and DEL escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6f}"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")
