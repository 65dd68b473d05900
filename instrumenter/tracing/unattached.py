"""Which uprobes and uretprobes never attached anywhere during a run, and why (issue 26).

A probe on an object waits for the object to be mapped (dynamic.py, Session.image_mapped): a
library the program never loads, or a BIN that names no object of the run, leaves it waiting to
the end, with 0 hits that look like a function never called. bpftrace says when it could not
attach a probe (its attach step warns or fails per probe); trapline says it at the end, when
whether the object would come is known.
"""
from ..probes.definitions import UPROBE, URETPROBE


def never_attached(session) -> list[str]:
    """One line per uprobe/uretprobe of `session` that no strategy ever placed: the probe's
    spec and the reason."""
    pending_ifuncs = {id(p) for r in session._ifuncs.values() for p in r.probes}
    lines = []
    for probe in session.probes:
        if probe.spec.kind not in (UPROBE, URETPROBE) or getattr(probe, "chosen", None):
            continue
        lines.append(f"{probe.spec.text}: never attached: {_reason(session, probe, pending_ifuncs)}")
    return lines


def _reason(session, probe, pending_ifuncs: set[int]) -> str:
    spec = probe.spec
    if not any(spec.matches_binary(path) for path in session.mapped_paths):
        return f"no object named {spec.binary} was mapped"
    if id(probe) in pending_ifuncs:
        return f"the IFUNC resolver of {spec.function} never returned an implementation"
    return "not enabled before the run ended"
