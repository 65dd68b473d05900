"""What a property's body says of one example besides passing: a Counterexample (the report's
lines), and a refusal's reason counted without the site it names."""
from __future__ import annotations

import re


class Counterexample(Exception):
    """A failing example, with its report's lines (the last one raised is the shrunk one)."""

    def __init__(self, lines: list[str]):
        super().__init__(lines[0])
        self.lines = lines


def reason(text: str) -> str:
    """A refusal's reason without the instruction it names (so that reasons count up)."""
    text = re.sub(r"^0x[0-9a-f]+(: [^:]*)?: ", "", text)       # "0x1000: insn ops: reason"
    text = re.sub(r" \(try: [^)]*\)$", "", text)
    return text if len(text) <= 60 else text[:57].rsplit(" ", 1)[0] + "..."
