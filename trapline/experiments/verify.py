"""`trapline experiment verify DIR`: run an experiment again from its manifest and compare every
deterministic output bit for bit.

First the inputs: the spec in DIR and every file the manifest lists are hashed again (a shipped
sample where this trapline keeps it, a program or rootfs file where the spec names it); the
first that differs is named with both hashes. Then every point the manifest says is done runs
again, and results.csv and results.jsonl are compared cell by cell: the first differing row and
column is named with both values. host_* columns are skipped (and the report says which); so is
a plot of one. Then each deterministic output's sha256 against the manifest's, which catches a
change of the file outside the cells compared (a host_* cell, the line ends).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import manifest as manifests
from . import plots
from .execute import Where
from .inputs import sha256
from .metrics import is_host
from .results import CSV_NAME, JSONL_NAME, csv_text, jsonl_text, read_csv, read_jsonl
from .runner import InputChanged, changed_input, checked_plan, compute, records_name, spec_of


@dataclass
class Verdict:
    ok: bool
    lines: list[str]


def verify(directory: Path, where: Where, progress=None) -> Verdict:
    manifest = manifests.read(directory)
    try:
        spec = spec_of(directory, manifest)
    except InputChanged as e:
        return Verdict(False, [str(e)])
    plan = checked_plan(spec)
    changed = changed_input(manifest, plan)
    if changed:
        return Verdict(False, [changed])
    done = manifest.get("points_done", [])
    outcome = compute(plan, done, where, progress)
    if not outcome.complete and len(outcome.rows) != len(done):
        return Verdict(False, ["verify was interrupted: nothing compared"])
    rows = outcome.ordered_rows()
    notes = _environment_notes(manifest.get("environment", {}))
    for name, fresh in ((CSV_NAME, csv_text(plan.parameters, rows)), (JSONL_NAME, jsonl_text(rows))):
        difference = _compare_file(directory / name, fresh, name)
        if difference:
            return Verdict(False, notes + [difference])
    for index in sorted(outcome.records):
        difference = _compare_lines(directory / records_name(index), outcome.records[index],
                                    records_name(index))
        if difference:
            return Verdict(False, notes + [difference])
    skipped = sorted({c for row in rows for c in row if is_host(c)})
    if manifest.get("status") != "complete":
        notes.append(f"note: a partial folder ({manifest.get('partial_because', '')}): "
                     f"{len(done)} of {manifest.get('points_total')} points done, those are compared")
    lines = notes + [f"{len(done)} points run again: {CSV_NAME} and {JSONL_NAME} identical, cell "
                     f"by cell, skipping the host columns {', '.join(skipped) or '(none)'}"]
    for output in manifest.get("outputs", []):
        problem = _check_output(directory, output, spec, rows, manifest)
        if problem:
            return Verdict(False, lines + [problem])
    if outcome.records:
        lines.append(f"probe records of {len(outcome.records)} points identical, line by line")
    plots_out = [o for o in manifest.get("outputs", [])
                 if o["path"] not in (CSV_NAME, JSONL_NAME) and not o["path"].startswith("records/")]
    compared = [o["path"] for o in plots_out if not o.get("host_data")]
    skipped = [o["path"] for o in plots_out if o.get("host_data")]
    if compared:
        lines.append(f"plots drawn again, byte-identical: {', '.join(compared)}")
    if skipped:
        lines.append(f"plots of host columns skipped: {', '.join(skipped)}")
    return Verdict(True, lines + ["verified"])


def _compare_lines(path: Path, fresh: str, name: str) -> str | None:
    try:
        stored = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        return f"{name}: cannot read it ({e})"
    for number, (before, after) in enumerate(zip(stored, fresh.splitlines()), start=1):
        if before != after:
            return f"{name}: line {number}: recorded {before}, now {after}"
    if len(stored) != len(fresh.splitlines()):
        return f"{name}: {len(stored)} records recorded, {len(fresh.splitlines())} now"
    return None


def _compare_file(path: Path, fresh: str, name: str) -> str | None:
    try:
        stored = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        return f"{name}: cannot read it ({e})"
    if name == CSV_NAME:
        return _compare_tables(read_csv(stored), read_csv(fresh), name)
    try:
        old, new = read_jsonl(stored), read_jsonl(fresh)
    except ValueError as e:
        return f"{name}: not JSON Lines ({e})"
    header = sorted({k for row in old + new for k in row})
    return _compare_tables([header] + [[_json_cell(r, k) for k in header] for r in old],
                           [header] + [[_json_cell(r, k) for k in header] for r in new], name)


def _json_cell(row: dict, key: str) -> str:
    return repr(row[key]) if key in row else "(absent)"


def _compare_tables(old: list[list[str]], new: list[list[str]], name: str) -> str | None:
    if not old or not new:
        return f"{name}: empty" if not old else None
    if [c for c in old[0] if not is_host(c)] != [c for c in new[0] if not is_host(c)]:
        return f"{name}: columns differ: recorded {', '.join(old[0])}; now {', '.join(new[0])}"
    if len(old) != len(new):
        return f"{name}: {len(old) - 1} rows recorded, {len(new) - 1} now"
    old_at = {c: i for i, c in enumerate(old[0])}
    for number, (recorded, fresh) in enumerate(zip(old[1:], new[1:]), start=1):
        for column, index in ((c, i) for i, c in enumerate(new[0]) if not is_host(c)):
            before = recorded[old_at[column]] if old_at[column] < len(recorded) else "(missing)"
            after = fresh[index]
            if before != after:
                point = fresh[new[0].index("point")] if "point" in new[0] else "?"
                return (f"{name}: row {number} (point {point}), column {column}: recorded "
                        f"{before!r}, now {after!r}")
    return None


def _check_output(directory: Path, output: dict, spec, rows, manifest) -> str | None:
    path = directory / output["path"]
    if not path.is_file():
        return f"{output['path']}: missing"
    if output["path"] in (CSV_NAME, JSONL_NAME) or output["path"].startswith("records/"):
        if sha256(path.read_bytes()) != output["sha256"]:
            return (f"{output['path']}: sha256 differs from the manifest's (its deterministic cells "
                    "are identical: the file was changed in a host_* column or its layout)")
        return None
    if output.get("host_data"):
        return None
    with tempfile.TemporaryDirectory(prefix="trapline-verify-") as scratch:
        plots.draw(spec, rows, Path(scratch))
        fresh = Path(scratch) / output["path"]
        fresh_hash = sha256(fresh.read_bytes()) if fresh.is_file() else "(not drawn)"
    if fresh_hash != output["sha256"] or sha256(path.read_bytes()) != output["sha256"]:
        return (f"{output['path']}: sha256 {sha256(path.read_bytes())} in DIR, "
                f"{output['sha256']} in the manifest, {fresh_hash} drawn again")
    return None


def _environment_notes(recorded: dict) -> list[str]:
    now = manifests.environment()
    return [f"note: {key} was {recorded.get(key)!r}, now {now[key]!r}"
            for key in now if key in recorded and recorded[key] != now[key]]
