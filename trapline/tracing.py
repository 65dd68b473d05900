"""Output of `trapline trace`: one event per probe hit, as text or JSON Lines, and the
per-probe hit table of `-c`."""
import json

from .host_output import guarded


def format_text(record) -> str:
    parts = [f"{record.ts:>14}", f"{record.pid:>6}", f"{record.tid:>6}", record.probe]
    if record.kind in ("entry", "return"):
        parts.append(record.name)
    if record.kind == "profile":            # the interrupted PC; args are the stack, if asked
        parts.append(record.name)
        if record.args:
            parts.append("stack=" + ",".join(f"{a:#x}" for a in record.args))
    elif record.args:
        parts.append("args=" + ",".join(f"{a:#x}" for a in record.args))
    if record.retval is not None:
        parts.append(f"retval={record.retval}")
    parts += [f"{key}={_field_text(value)}" for key, value in record.fields]
    return " ".join(parts)


def _field_text(value) -> str:
    """An event field in the text format: numbers as they are, strings quoted as JSON does,
    lists of strings (exec's argv) as a JSON list."""
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def format_jsonl(record) -> str:
    return json.dumps(record.as_json(), separators=(",", ":"))


FORMATTERS = {"text": format_text, "jsonl": format_jsonl}


class StreamSink:
    """Writes records as they are drained, so events interleave with the guest's output."""

    def __init__(self, out, fmt: str):
        self.out = guarded(out)             # a reader gone: the run stops (host_output.py)
        self.format = FORMATTERS[fmt]

    def __call__(self, records) -> None:
        for record in records:
            self.out.write(self.format(record) + "\n")
        self.out.flush()


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
