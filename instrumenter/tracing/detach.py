"""Detach at any moment (US 7,017,153: "reverting a process in an in-line instrumented
state to an uninstrumented state"): `Session.detach()`.

At a safe point (between two guest instructions, outside every hook: kernel_model/
time/insn_alarms.py), for every address space the session traces:
  0. every probe is disabled: nothing is recorded from this instant;
  1. every thread's PC leaves the tool's code (detach_threads.py: moved to the original address
     it stands for, or stepped to such a point);
  2. what native actions counted or stored in the guest is collected (args:N records, counts):
     the pages holding it go next;
  3. the call stacks are cleaned (detach_stacks.py: return pointers into tool code found by
     unwinding and by the uretprobe shadow stacks reset to the original ones, signal frames'
     saved PCs too), and the shadow stacks dropped;
  4. every probe is taken out through its strategy, and then every patched text byte is
     restored through the door (kernel_model/debug/patches.py `remove_all_patches`: the
     program's bytes exactly, whoever patched them), and the door forgets the space's
     breakpoint handlers, #UD sites, #DB handler, gates and tool code ranges;
  5. the instrumentation code space is unmapped (XOL pages: trampolines, jump trampolines,
     landings, handler copies; native data pages), and a table of what each former tool
     address stood for is kept: a stale pointer the program copied (a return address it saved)
     that it later jumps to faults in the unmapped range, and the door sends the thread to the
     original address instead (kernel_model/debug/detach.py); each such translation is
     reported (`DetachReport.stale`).
Afterwards the session hears of no event; children and exec'd images run bare.

When a thread cannot be brought out of tool code right now (asleep in a system call a user
handler made, or a pending signal frame that returns half-way into a relocated recipe), the
probes stay disabled, the text is restored at once (nothing enters tool code any more), and the
rest is retried every RETRY instructions until it can be done.
"""
from dataclasses import dataclass, field

from ..children.backpatch import forget_space_tables
from ..errors import InstrumenterError
from .detach_stacks import RewrittenSlot, StackCleaner
from .detach_stale import StaleTable
from .detach_threads import MovedPc, ThreadMover, detach_address_map

TOOL_AREAS = (b"[uprobes]", b"[trapline-native]")     # xol.py, native.py
RETRY = 1000


@dataclass
class DetachReport:
    requested_at: int | None = None          # instruction clock when the probes went off
    done_at: int | None = None               # when nothing of the tool was left (None: not yet)
    spaces: list[int] = field(default_factory=list)           # pids, one per space
    moved: list[MovedPc] = field(default_factory=list)
    rewritten: list[RewrittenSlot] = field(default_factory=list)
    restored: list[tuple[int, int]] = field(default_factory=list)   # (pid, patched address)
    unmapped: list[tuple[int, int, int, bytes]] = field(default_factory=list)  # pid, start, end, name
    waiting: list[str] = field(default_factory=list)          # why the last attempt waited
    stale: list[tuple[int, int, int]] = field(default_factory=list)   # pid, tool address, original
    on_stale: object = None                  # callable(pid, tool address, original), if any

    @property
    def done(self) -> bool:
        return self.done_at is not None


class Detacher:
    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        self.report: DetachReport | None = None
        self.on_done = None

    def request(self, *, at_once: bool = False, on_done=None) -> DetachReport:
        """Detach at the next safe point (`at_once`: the caller is at one); `on_done(report)`
        is called at the safe point where nothing of the tool is left."""
        if self.report is not None:
            raise InstrumenterError("the session is detached already")
        self.report = DetachReport()
        self.on_done = on_done
        if at_once:
            self.attempt()
        else:
            self.debug.at_safe_point(self.attempt)
        return self.report

    def attempt(self) -> None:
        report = self.report
        if report.requested_at is None:
            report.requested_at = self.debug.instruction_count()
            for probe in self.session.probes:
                probe.enabled = False
        spaces = self._traced_spaces()
        addrmap = detach_address_map(self.session)
        movers = ThreadMover(self.session, addrmap)
        stacks = StackCleaner(self.session, movers)
        waiting = []
        for process in spaces:
            moved, stuck = movers.settle(process)
            report.moved += moved
            waiting += stuck
            for thread in self.debug.space_threads(process):
                waiting += stacks.unsettled_signal_frames(thread)
        report.waiting = waiting
        if waiting:
            for process in spaces:          # nothing enters tool code any more meanwhile
                self.debug.backpatch(process)
            self.debug.at_instruction(self.debug.instruction_count() + RETRY, self.attempt)
            return
        jumps = self.session.strategies.if_built("jump")
        if jumps is not None:
            jumps.natives.collect()                   # before their pages go
        for process in spaces:
            self._clean_space(process, stacks)
        self._leave()
        report.done_at = self.debug.instruction_count()
        if self.on_done is not None:
            self.on_done(report)

    def _traced_spaces(self) -> list:
        """One live traced process per address space, by pid."""
        seen, chosen = set(), []
        monitor = self.session.monitor
        for process in self.debug.live_processes():
            if monitor.is_traced(process) and process.space.serial not in seen:
                seen.add(process.space.serial)
                chosen.append(process)
        return chosen

    def _clean_space(self, process, stacks: StackCleaner) -> None:
        report = self.report
        report.spaces.append(process.pid)
        for thread in self.debug.space_threads(process):
            rewritten, _ = stacks.clean(thread)
            report.rewritten += rewritten
        stale = StaleTable.snapshot(self.session, process)
        report.restored += [(process.pid, a) for a in self.debug.patched_addresses(process)]
        self._remove_probes(process)
        self.debug.remove_all_patches(process)      # what a strategy kept: the door's bytes
        space = process.space
        self.debug.clear_space(space)
        forget_space_tables(self.session, space)
        self.session.returns.landings.pop(space.serial, None)
        self.session.dynamic.forget_space(space.serial)
        self._end_windows(process)
        for start, end, name in self.debug.unmap_tool_pages(process, self._area_names()):
            report.unmapped.append((process.pid, start, end, name))
            self.debug.keep_stale_range(space, start, end, stale.translator(report))

    def _remove_probes(self, process) -> None:
        """Each placement in this space taken out by its strategy (the door's restore after it
        covers what a strategy keeps until its last probe goes: a jump's native part)."""
        serial = process.space.serial
        for probe in self.session.probes:
            for placement in [p for p in probe.placements if p.serial == serial]:
                strategy = self.session.strategies[placement.strategy]
                try:
                    strategy.remove(placement.process, placement.address, placement.hook,
                                    probe.spec.text)
                except InstrumenterError:
                    pass            # kept by the strategy for a reason: the door restores it
                probe.placements.remove(placement)

    def _end_windows(self, process) -> None:
        """A thread inside a single-step window (TF set, its original instruction lifted) gets
        TF cleared, and threads held for a stop-all window are released."""
        for strategy in self.session.strategies.built():
            end = getattr(strategy, "end_windows", None)
            if end is not None:
                end(process)

    def _area_names(self) -> tuple[bytes, ...]:
        names = list(TOOL_AREAS)
        for strategy in self.session.strategies.built():
            names += [n for n in getattr(strategy, "area_names", ()) if n not in names]
        return tuple(names)

    def _leave(self) -> None:
        """The session hears of nothing any more: no event, no trace stop, no system call."""
        session = self.session
        for process in self.debug.live_processes():
            if self.debug.tracer_of(process) is session.monitor:
                self.debug.detach(process)
        session.monitor.traced.clear()
        for listener in [session, session.monitor, session.events, *session.strategies.built()]:
            self.debug.unsubscribe(listener)
