"""results.csv and results.jsonl: one row per sweep point, written canonically so that the same
results are the same bytes: rows in point order, JSON keys sorted, CSV columns in a fixed order
(point, the parameters as the spec gives them, the metrics in metrics.py's order, host_* last),
floats with six decimals, booleans as true/false, "\\n" line ends.
"""
from __future__ import annotations

import csv
import io
import json

from .metrics import HOST, METRICS

CSV_NAME, JSONL_NAME = "results.csv", "results.jsonl"


def columns(parameters: list[str], rows: list[dict]) -> list[str]:
    present = set().union(*rows) if rows else set()
    metrics = [m for m in METRICS if m in present]
    host = [h for h in HOST if h in present]
    return ["point", *parameters, *metrics, *host]


def cell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}"
    if value is None:
        return ""
    return str(value)


def csv_text(parameters: list[str], rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = columns(parameters, rows)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(row.get(name)) for name in header])
    return out.getvalue()


def jsonl_text(rows: list[dict]) -> str:
    return "".join(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n" for row in rows)


def read_jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def read_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))
