"""`trapline explain --technique detach`: US 6,957,421's uninstrumenting (US 7,017,153), as done in a
run.

samples/bin/ARCH/fib is probed at fib's entry and return (uretprobe) with the trampoline
strategy. At the entry probe's 6th hit its action asks for a detach; at the next safe point the
thread is at the first byte of fib's trampoline (the kernel breakpoint handler has just sent it
there) and five frames of fib's recursion return through the uretprobe landing. The listing
shows what the detach did: the PC moved out of the trampoline to the original instruction, each
return pointer found by unwinding and reset from the landing to the real return address, the
text restored, the tool's pages unmapped; then the program runs on bare to the output it has
unprobed. Addresses are fixed (no randomization), so the output is the same on every run.
"""

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from .guest import spawn_fib
from .rows import area, row
from ..probespec import parse_probe_spec

DETACH_AT_HIT = 6


def explain_detach(arch: str = "x86_64", n: int = 8) -> str:
    from .document import from_lines, render_text
    lines, facts = _detach(arch, n)
    return render_text(from_lines("detach", arch, lines, **facts))


def detach_document(arch: str = "x86_64") -> dict:
    """The lines and rows as a document (document.py), with the run's figures as facts."""
    from .document import from_lines
    lines, facts = _detach(arch, 8)
    return from_lines("detach", arch, lines, **facts)


def _detach(arch: str, n: int) -> tuple[list, dict]:
    kernel, proc, stdout = spawn_fib(arch, n)
    records: list = []
    state: dict = {}

    def action(context):
        if entry.hits == DETACH_AT_HIT:
            state["areas"] = _tool_areas(kernel, proc)
            state["patched"] = [(a, kernel.debug.read_memory_raw(proc, a, 1),
                                 kernel.debug.read_memory(proc, a, 1))
                                for a in kernel.debug.patched_addresses(proc)]
            session.detach(on_done=lambda report: state.setdefault("after", _tool_areas(kernel, proc)))
    entry = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=1, action=action)
    returns = Probe(parse_probe_spec("uretprobe:fib:fib"), nargs=0)
    session = Session(kernel, [entry, returns], buffers=Buffers(drain=records.extend),
                      strategy="trampoline")
    session.attach(proc)
    status = kernel.run(proc)
    session.flush()
    report = session.detacher.report
    name = lambda address: kernel.debug.symbolize(proc, address)    # noqa: E731
    landing = next(iter(session.returns.landings.values()), None)
    out = [f"=== {arch}: samples/bin/{arch}/fib {n}, probes uprobe:fib:fib and uretprobe:fib:fib "
           f"(trampoline strategy); the entry probe's action asks for a detach at its "
           f"{DETACH_AT_HIT}th hit ===",
           row("detach-point", requested_at=report.requested_at, done_at=report.done_at),
           row("tool-areas", areas=[area(n, s, e) for s, e, n in state["areas"]]),
           "1. threads out of the tool's code (detach_threads.py):"]
    for moved in report.moved:
        out.append(row("thread-moved", tid=moved.tid, tool=moved.tool, original=moved.original,
                       symbol=name(moved.original), how=moved.how))
    out.append("2. return pointers into tool code reset (detach_stacks.py), innermost first:")
    for slot in report.rewritten:
        out.append(row("return-reset", tid=slot.tid, slot=slot.slot, tool=slot.tool,
                       original=slot.original, symbol=name(slot.original), found_by=slot.found_by))
    out.append("3. text restored through the door (debug/patches.py):")
    for address, raw, original in state["patched"]:
        out.append(row("restored", address=address, symbol=name(address), patched=raw.hex(),
                       original=original.hex()))
    out.append(row("unmapped", areas=[area(n, s, e) for _, s, e, n in report.unmapped],
                   left=[a[2].decode() for a in state["after"]]))
    entries = sum(1 for r in records if r.kind == "entry")
    exits = sum(1 for r in records if r.kind == "return")
    out.append(f"run: exit status {status >> 8}, output {stdout.data.decode().strip()!r}; "
               f"records: {entries} entries and {exits} returns, all before the detach "
               f"(last at {max(r.ts for r in records)})" + (f"; landing was {landing:#x}" if landing else ""))
    facts = {"exit_status": status >> 8, "output": stdout.data.decode().strip(),
             "entries": entries, "returns": exits, "requested_at": report.requested_at,
             "done_at": report.done_at, "threads_moved": len(report.moved),
             "return_pointers_reset": len(report.rewritten),
             "last_record_at": max(r.ts for r in records)}
    return out, facts


def _tool_areas(kernel, proc) -> list:
    from instrumenter.tracing.detach import TOOL_AREAS
    return sorted((v.start, v.end, v.name) for v in proc.space.vm.vmas if v.name in TOOL_AREAS)
