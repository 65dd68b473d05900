"""What the tool does with the children of a traced process (`--children`).

  follow   (gdb's follow-fork-mode child + detach-on-fork off, bpftrace's default): every child
           is traced. A fork child has its own copy of the patches and XOL pages (the session
           copied the bookkeeping at the fork event); a vfork child runs in the parent's patched
           space, and its hits carry its own pid.
  detach   children run the original program, untraced:
           - fork: the child's copy of the memory is cleaned of every patch before it runs
             (a clone(CLONE_VM) child has no copy: it shares the parent's probes and stays
             traced, as under follow, because taking them out would lose the parent's hits);
           - vfork (US 7,185,320 FIG. 6-8): lazy — the child's first trap suspends it, every site of
             the shared space is backpatched with the original bytes and the child resumes at
             the original instruction (that hit is not recorded); eager — the space is
             backpatched at the pre-fork event already. Either way every site is re-inserted
             at vfork-done, before the parent runs again; a failed vfork re-inserts at once.
             Pending uretprobe returns (the landing replaced a return address at a function
             active across the vfork, vfork itself included): in both modes the child gets
             the real return addresses at the vfork event, before it runs — in its own
             registers (libc's vfork holds its return address in one across the syscall) and
             in the live slots of the shared stack, which get the landing back at vfork-done.
             So the child never enters the landing and its returns are not recorded, while
             the parent returns through it once, with the child's pid.
  naive    US 7,185,320 FIG. 1 on purpose: the tool waits only for its traced process's events, so
           a vfork child that reaches a breakpoint stops for a tracer that never comes, while
           the parent sleeps until the child is done. The kernel reports the deadlock. (Fork
           children are cleaned, as under detach: FIG. 1 is about vfork.) A uretprobe's landing
           is such a breakpoint too: a vfork child returning from a probed vfork (or from any
           probed function it shares with the parent) stops there, and the run deadlocks.

Linux vfork suspends only the calling thread: other threads of the parent keep running while
the space is backpatched, and their hits in that window are lost. The patent assumes a
single-threaded parent; the monitor reports the case when it happens.
"""
from kernel_model.debug import TraceEvent, TraceOption

from .backpatch import BackpatchEngine
from ..errors import InstrumenterError
from ..strategies.native_collector import SpaceNatives

POLICIES = ("follow", "detach", "naive")
BACKPATCH_MODES = ("lazy", "eager")


class ChildPolicy:
    """Base: the hooks the process monitor calls; the defaults do nothing."""
    traces_children = False
    # What the monitor asks of the tracing facility for the processes it traces: the fork and
    # vfork events, with the children traced (and inheriting the flags) or not.
    trace_events = TraceEvent.FORK | TraceEvent.VFORK
    trace_options = TraceOption.UNTRACED_CHILDREN

    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        self.engine = BackpatchEngine(session)
        self.monitor = None

    def bind(self, monitor) -> None:
        self.monitor = monitor

    def report(self, text: str) -> None:
        self.monitor.report(text)

    def pre_fork(self, parent, prediction) -> None:
        pass

    def on_fork(self, parent, child) -> None:
        pass

    def on_vfork(self, parent, child) -> None:
        pass

    def on_vfork_done(self, parent, child) -> None:
        pass

    def on_failed(self, parent, prediction) -> None:
        pass

    def on_untraced_fork(self, parent, child) -> None:
        """A fork of an untraced process whose memory still holds patches (a vfork child
        before its first hit shares the parent's): its copy is cleaned as well."""
        if child.space is parent.space:
            return                   # no copy: nothing of the child's own to clean
        if self.engine.has_patches(parent):
            cleaned = self.engine.clean_fork_child(parent, child, self.session.debug.current_thread())
            self.report(f"fork pid {child.pid} of untraced pid {parent.pid}: cleaned "
                        f"{len(cleaned)} sites")

    def untraced_trap(self, handler, address: int, frame, thread) -> bool:
        return handler(frame, thread)

    def on_trace_stop(self, stop) -> None:
        """A thread stopped at a fork/vfork event: the tool has done its work at the event
        itself (the notifications come first), so it lets the thread go on at once."""
        self.debug.resume(stop.thread)

    def waits_for(self) -> str | None:
        return None

    # ---- shared by the untracing policies ---------------------------------------------------
    def clean_fork_child(self, parent, child) -> None:
        if child.space is parent.space:
            self._keep_shared_child(parent, child)
            return
        cleaned = self.engine.clean_fork_child(parent, child, self.session.debug.current_thread())
        self.report(f"fork pid {child.pid}: cleaned {len(cleaned)} sites ({self.name})")

    def _keep_shared_child(self, parent, child) -> None:
        """clone(CLONE_VM) without CLONE_VFORK: the child runs in the parent's memory while
        the parent runs too. Its patches are the parent's own; taking them out (or
        backpatching, which the patent does only while a vfork parent sleeps) would lose the
        parent's hits. So the child keeps the probes and is traced as under follow."""
        self.monitor.traced.add(child.pid)
        self.report(f"fork pid {child.pid} shares the memory of pid {parent.pid} (clone with "
                    f"CLONE_VM): its probes are the parent's, so it stays traced ({self.name})")

    def symbolize(self, process, address: int) -> str:
        return self.session.kernel.symbolize(process, address)


class Follow(ChildPolicy):
    name = "follow"
    traces_children = True
    trace_options = TraceOption.INHERIT

    def on_vfork(self, parent, child) -> None:
        """Native counters live in the shared memory: what they hold now is the parent's."""
        entry = self.session.jumps.natives.spaces.get(parent.space.serial)
        if entry is not None:
            self.session.jumps.natives.collect_space(entry)

    def on_vfork_done(self, parent, child) -> None:
        """What the shared counters gained while the parent slept is the child's."""
        entry = self.session.jumps.natives.spaces.get(parent.space.serial)
        if entry is not None:
            self.session.jumps.natives.collect_space(SpaceNatives(entry.space, child, entry.slots))


class Detach(ChildPolicy):
    name = "detach"

    def __init__(self, session, mode: str = "lazy"):
        super().__init__(session)
        if mode not in BACKPATCH_MODES:
            raise InstrumenterError(f"unknown backpatch mode {mode!r} (have: lazy, eager)")
        self.mode = mode
        self.return_slots: dict[int, list[tuple[int, int]]] = {}   # vfork parent pid -> slots

    def on_fork(self, parent, child) -> None:
        self.clean_fork_child(parent, child)

    def pre_fork(self, parent, prediction) -> None:
        if prediction.vfork and self.mode == "eager":
            restored = self.engine.backpatch(parent)
            self.report(f"pre-fork pid {parent.pid}: backpatched {len(restored)} sites (eager)")
            self._warn_other_threads(parent, self.session.debug.current_thread())

    def on_vfork(self, parent, child) -> None:
        self.debug.set_gate(parent.space, self.monitor.gate)
        self._detach_returns(parent, child)
        if self.mode == "lazy" and not self.engine.is_backpatched(parent):
            silent = self.engine.silent_sites(parent)
            if silent:
                # A native jump part never traps: the child would run it unseen (and count
                # for the parent). Such a space cannot wait for the first hit.
                restored = self.engine.backpatch(parent)
                self.report(f"vfork pid {child.pid}: backpatched {len(restored)} sites (lazy, at "
                            f"the vfork: {len(silent)} native jump sites never trap)")
                self._warn_other_threads(parent, child.vfork_parent)

    def _detach_returns(self, parent, child) -> None:
        """Return addresses are not code sites: the child would use a landing before any trap
        could tell the tool, so both modes put the real ones back before it runs."""
        registers, slots = self.engine.detach_returns(child.vfork_parent, child)
        if slots:
            self.return_slots[parent.pid] = slots
        if registers or slots:
            self.report(f"vfork pid {child.pid}: real return addresses instead of the uretprobe "
                        f"landing in registers [{', '.join(registers)}] and {len(slots)} stack slots")

    def untraced_trap(self, handler, address: int, frame, thread) -> bool:
        """FIG. 7: the untraced child's first breakpoint. Suspended here (it is inside the trap),
        the space is backpatched, and the child resumes at the original instruction."""
        process = thread.process
        if self.session.returns.is_landing(process, address):
            return self._untraced_return(frame, thread)
        resume = self.engine.resume_address(process, address)
        if self.debug.patch_at(process, resume) is None:
            self.report(f"pid {process.pid} (untraced) trapped at {address:#x}, which is no "
                        "patched site: handled as traced")
            return handler(frame, thread)
        if not self.engine.is_backpatched(process):
            restored = self.engine.backpatch(process)
            self.report(f"vfork pid {process.pid}: backpatched {len(restored)} sites "
                        f"(lazy, first hit at {address:#x})")
            parent_thread = getattr(process, "vfork_parent", None)
            if parent_thread is not None:
                self._warn_other_threads(parent_thread.process, parent_thread)
        frame.ip = resume
        return True

    def _untraced_return(self, frame, thread) -> bool:
        """The child reached the landing all the same (its landing address was somewhere
        `_detach_returns` does not look, e.g. spilled to memory): its own copy of the pending
        returns says where it goes; nothing is recorded."""
        pending = self.session.returns.unwind(frame, thread)
        self.report(f"pid {thread.process.pid} (untraced) returned into the uretprobe landing "
                    f"from {pending.function_name}: resumed at "
                    f"{pending.return_address:#x}, not recorded")
        return True

    def on_vfork_done(self, parent, child) -> None:
        """FIG. 8: the parent is about to resume (it has not run yet): instrument it again."""
        self.debug.clear_gate(parent.space)
        slots = self.return_slots.pop(parent.pid, None)
        if slots:
            rearmed = self.engine.reinsert_returns(parent, slots)
            self.report(f"vfork-done pid {parent.pid}: landing back in {len(rearmed)} of "
                        f"{len(slots)} stack slots")
        if not self.engine.is_backpatched(parent):
            self.report(f"vfork-done pid {parent.pid}: child {child.pid} hit no probe site, "
                        "nothing to re-insert")
            return
        restored = self.engine.reinsert(parent)
        self.report(f"vfork-done pid {parent.pid}: re-inserted {len(restored)} sites")

    def on_failed(self, parent, prediction) -> None:
        if prediction.vfork and self.engine.is_backpatched(parent):
            restored = self.engine.reinsert(parent)
            self.report(f"pid {parent.pid}: re-inserted {len(restored)} sites after the failed vfork")

    def _warn_other_threads(self, parent, vforking_thread) -> None:
        others = [t for t in parent.live_threads() if t is not vforking_thread]
        if others:
            tids = ", ".join(str(t.tid) for t in others)
            self.report(f"pid {parent.pid}: threads {tids} keep running while the space is "
                        "backpatched; their probe hits until vfork-done are not recorded")


class Naive(ChildPolicy):
    """FIG. 1: a tool that waits for its process's events only. Its children inherit trace
    control and the event flags (TTEO_PROC_INHERIT), so a vfork child's own vfork stops the
    grandchild for an event the tool never looks at ([0019]-[0020])."""
    name = "naive"
    trace_options = TraceOption.INHERIT

    def __init__(self, session):
        super().__init__(session)
        self.waiting_parent: int | None = None      # the vfork parent whose events it awaits

    def on_fork(self, parent, child) -> None:
        self.clean_fork_child(parent, child)

    def on_vfork(self, parent, child) -> None:
        self.debug.set_gate(parent.space, self.monitor.gate)
        self.waiting_parent = parent.pid

    def untraced_trap(self, handler, address: int, frame, thread) -> bool:
        """The child's trap goes to a tracer that never looks: it stays stopped (FIG. 1, 40)."""
        process = thread.process
        where = f"{address:#x} ({self._describe_trap(process, address, frame, thread)})"
        self.debug.stop_for_tracer(thread, f"at breakpoint {where}, waiting for its tracer")
        self.report(f"vfork pid {process.pid}: stopped at breakpoint {where}; the naive "
                    "monitor never services it")
        frame.ip = address          # stays at the patched instruction, as a ptrace stop does
        return False

    def _describe_trap(self, process, address: int, frame, thread) -> str:
        returns = self.session.returns
        if returns.is_landing(process, address):
            sp = frame.sp if frame.sp is not None else self.session.debug.cpu(process).sp
            pending = returns.returning(thread, sp)
            owner = f" of {pending.function_name}" if pending is not None else ""
            return f"the uretprobe return landing{owner}"
        site = self.engine.resume_address(process, address)
        if site == address:
            return self.symbolize(process, address)
        return f"the trampoline of {self.symbolize(process, site)} at {site:#x}"

    def on_vfork_done(self, parent, child) -> None:
        self.debug.clear_gate(parent.space)

    def on_trace_stop(self, stop) -> None:
        """FIG. 1 function 28: only trace events that include the parent's pid are handled —
        its own stops, and its children's fork/vfork stops, which name it. Any other stays
        stopped: the naive tool never looks."""
        watched = self.monitor.root_pid
        if watched in (stop.pid, stop.other_pid):
            self.debug.resume(stop.thread)
            return
        self.waiting_parent = watched
        self.report(f"{stop.event} event of pid {stop.other_pid} (stop of pid {stop.pid}): "
                    f"ignored, the naive monitor waits for events of pid {watched} only")

    def waits_for(self) -> str | None:
        if self.waiting_parent is None:
            return None
        return ("trapline (naive monitor) waiting for trace events from the parent pid "
                f"{self.waiting_parent} only")


def make_policy(session, children: str = "follow", backpatch: str = "lazy") -> ChildPolicy:
    if backpatch not in BACKPATCH_MODES:
        raise InstrumenterError(f"unknown backpatch mode {backpatch!r} (have: lazy, eager)")
    if children == "follow":
        return Follow(session)
    if children == "detach":
        return Detach(session, backpatch)
    if children == "naive":
        return Naive(session)
    raise InstrumenterError(f"unknown children policy {children!r} (have: {', '.join(POLICIES)})")
