"""After a detach: what each former tool address stood for (US 7,017,153: a pointer
into the unmapped instrumented code space that the program kept — a return address it copied, a
function pointer taken from one — faults when it is used; the fault is translated to the
original address and the program goes on there, and the translation is reported).

The table is taken just before the pages go, from the strategies' own bookkeeping: every exact
point of a trampoline page (its first byte and the copy's: the original instruction not run
yet; the jump back: the next one), of a jump site's trampoline (its parts' first bytes, each
relocated covered instruction), and of every relocated function's copy (`stale_points`). A uretprobe landing stands for no one address (every pending return went
through the same one): a stale landing keeps its fault.
"""
from ..debugger.addrmap import JumpTrampolines
from .detach_threads import exact_points


class StaleTable:
    def __init__(self, points: dict[int, int]):
        self.points = points                 # former tool address -> original address

    @classmethod
    def snapshot(cls, session, process) -> "StaleTable":
        points: dict[int, int] = {}
        serial = process.space.serial
        for (space_id, original), site in sorted(session.trampolines.sites.items()):
            if space_id == serial and site.page is not None:
                points.update(exact_points(site.page, original, site.insn.next_address))
        bodies = JumpTrampolines(session)
        for (space_id, _), site in sorted(session.jumps.sites.items()):
            if space_id == serial:
                points[site.entry] = site.address
                points.update(_body_points(bodies, process, site))
        for (space_id, part), site in sorted(session.jumps.parts.items()):
            if space_id == serial:
                points[part] = site.address
        for strategy in session.strategies.built():      # relocated copies (base.py)
            points.update(strategy.stale_points(process))
        return cls(points)

    def translator(self, report):
        """`translate(ip, process)` for the door's fault hook: the original address, reported
        (the process may be a fork child of the detached one: its memory holds the same)."""
        def translate(ip: int, process) -> int | None:
            original = self.points.get(ip)
            if original is not None:
                report.stale.append((process.pid, ip, original))
                if report.on_stale is not None:
                    report.on_stale(process.pid, ip, original)
            return original
        return translate


def _body_points(bodies, process, site) -> dict[int, int]:
    """A jump body's exact points: each covered copy's first byte (as JumpTrampolines lays
    them out: instrumenter/debugger/addrmap.py), then the final jump back."""
    points, at = {}, site.body
    while at < site.body + 256:
        location = bodies._in_body(process, site, at)
        if location is not None and location.exact:
            points[at] = location.original
            if location.after:
                break
        at += 1
    return points
