"""A run with consumers: the guest in a Sandbox, a tracing session that follows it (children,
exec'd images, libraries as ld.so maps them), and every consumer's attach points wired to the
guest (probes.py, events.py); BEGIN before the guest's first instruction, END and the maps when
it is over (or at a consumer's exit()).

What bpftrace says about attach points, this says too: "Attaching N probes..." first (on
stderr, apart from the guest's output), and at the end each attach point that found nothing to
attach to (a function no object has, a library never loaded), as bpftrace reports an attach
failure; the run itself goes on.
"""
from dataclasses import dataclass, field

from .consumer import Consumer
from .events import ProcessEvents, TimedProbes
from .hit import Hit
from .native import ArgumentRecords
from .probes import UPROBE_KINDS, SyscallTracepoints, UserProbes
from .stacks import Stacks


@dataclass
class LangRun:
    exit_code: int
    consumers: list
    unattached: list[str] = field(default_factory=list)
    result: object = None
    native_sites: list[str] = field(default_factory=list)   # probes counting in the guest
    argument_sites: list[str] = field(default_factory=list)  # probes storing arguments there
    lost: dict = field(default_factory=dict)     # pid -> stored records the guest had to drop
    guarded_sites: list[str] = field(default_factory=list)   # their predicate runs there too
    table_sites: list[str] = field(default_factory=list)     # keyed aggregations in a guest table
    printf_sites: list[str] = field(default_factory=list)    # printf captured there (native_printf.py)


def count_probes(consumers) -> int:
    """The N of "Attaching N probes...": wildcards count what they match (probe_count.py)."""
    from .probe_count import probes_of
    return sum(probes_of(attach) for c in consumers for block in c.blocks for attach in block.attaches)


def make_consumers(programs: list[tuple[str, str]], out, report, batch: int = 1) -> list[Consumer]:
    """(source, name) pairs -> consumers; the first bad program stops all (before the run).
    `batch`: trapline/tracing.py batch_for's answer for `out`."""
    return [Consumer(source, name, out, stacks=None, report=report, batch=batch)
            for source, name in programs]


def run(consumers: list[Consumer], argv: list[str], sandbox_options: dict, *,
        strategy: str = "auto", children: str = "follow") -> LangRun:
    from instrumenter.tracing.session import Session

    from ..sandbox import Sandbox

    state = {}

    def attach(kernel, process) -> None:
        debug = kernel.debug
        stacks = Stacks(debug)
        records = ArgumentRecords()
        user, syscalls = UserProbes(debug, records), SyscallTracepoints(debug)
        events, timed = ProcessEvents(debug), TimedProbes(debug)
        session = Session(kernel, [], buffers=records, strategy=strategy, children=children)
        stacks.returns = session.returns
        session.providers.append(user)
        begin = Hit(debug, None, 0, "BEGIN", "")
        for consumer in consumers:
            consumer.stacks = stacks
            consumer.start(debug.virtual_time_ns(), debug.virtual_time_ns)
            for block in consumer.blocks:
                for attach_point in block.attaches:
                    _wire(attach_point, consumer, block, user, syscalls, events, timed)
        if syscalls.wanted:
            debug.syscall_watchers.append(syscalls)
        if events.wanted:
            debug.subscribe(events)
        state.update(debug=debug, user=user, session=session, records=records)
        records.start_printing = lambda: _start_printing(debug, session, records, consumers)
        for consumer in consumers:
            for block in consumer.blocks:
                if any(a.kind == "BEGIN" for a in block.attaches):
                    consumer.fire(block, begin)
        session.attach(process)

    sandbox = Sandbox(**{"capture": False, **sandbox_options}, tools=[attach])
    try:
        result = sandbox.run(argv)
    finally:
        for consumer in consumers:
            consumer.flush()
    if "session" in state:
        state["session"].flush()                 # the guests' native counts (native.py)
        state["user"].collected()
    debug = state.get("debug")
    end = Hit(debug, None, 0, "END", "") if debug is not None else None
    for consumer in consumers:
        consumer.finish(end)
    unattached = []
    if "user" in state:
        unattached = state["user"].unmatched()
    natives = [p.spec.text for p in state["user"].natives] if "user" in state else []
    stored = sorted(state["records"].routes) if "records" in state else []
    lost = state["records"].dropped() if "records" in state else {}
    guarded = state["user"].guarded() if "user" in state else []
    tables = sorted(state["records"].tables) if "records" in state else []
    printed = sorted(state["records"].printers) if "records" in state else []
    stored = [text for text in stored if text not in tables and text not in printed]
    return LangRun(result.exit_code, consumers, unattached, result, natives, stored, lost, guarded,
                   tables, printed)


def _start_printing(debug, session, records, consumers) -> None:
    """A site's printf is captured in the guest (native_printf.py): its buffer is drained
    before any other output, at every system call and whenever a thread leaves the CPU."""
    from .native_printf import PrintDrain
    drain = PrintDrain(session, records.printing)
    for printer in records.printers.values():
        printer.drain = drain
    debug.syscall_watchers.append(drain)
    debug.on_switch_out(drain)
    for consumer in consumers:
        consumer.before_write = drain


def _wire(attach, consumer, block, user, syscalls, events, timed) -> None:
    kind = attach.kind
    if kind in UPROBE_KINDS:
        user.want(attach, consumer, block)
    elif kind in ("tracepoint", "syscall"):
        syscalls.want(attach, consumer, block)
    elif kind in ("proc", "signal"):
        events.want(attach, consumer, block)
    elif kind in ("interval", "profile"):
        timed.want(attach, consumer, block)
