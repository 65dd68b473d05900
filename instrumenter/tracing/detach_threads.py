"""Detach, part 1: every thread's PC out of the tool's code (US 7,017,153).

Before the tool's pages can go, no thread may be about to execute them. At the safe point of
the detach each thread of a traced space is looked at:
  * PC outside tool code: nothing to do;
  * PC at a uretprobe landing (the function returned, the landing's int3 not run yet): the PC
    becomes the real return address of the frame that returned, as the landing's handler would
    have made it (uretprobes.py `unwind`);
  * PC at an exact point of tool code (the start of a trampoline or of a relocated copy: the
    original instruction has not run; a jump back: it has run, only the jump is left): the PC
    becomes the original address it stands for — the instruction runs once, from the original
    text, or is not run again;
  * anywhere else in tool code (a native part half done, a relocated recipe half done, a user
    handler running): the thread is single-stepped (one machine instruction at a time, through
    the door) until it reaches one of the points above, as the debugger's stepi does
    (instrumenter/debugger/stepping.py). The probes are disabled first, so a hook it passes
    records nothing.
A thread that cannot be stepped right now (asleep in a system call made from a user handler)
is reported; the detach is then retried at a later safe point (detach.py).

Which tool address stands for which original comes from a ToolAddressMap
(instrumenter/debugger/addrmap.py) whose trampoline source reads the page's named blocks
(page_layout.py): a trampoline page that runs native actions or handlers first has its copy
of the instruction further in, so only its first byte, the copy's first byte and the jump back
are exact.
"""
from dataclasses import dataclass

from ..debugger.addrmap import JumpTrampolines, ToolAddressMap, ToolLocation

MAX_MACHINE_STEPS = 100_000       # a handler looping forever must not hang the detach


@dataclass(frozen=True)
class MovedPc:
    pid: int
    tid: int
    tool: int            # where the thread was, in tool code
    original: int        # where it is now
    how: str             # "landing", "exact", "after" or "stepped N"


class TrampolinePages:
    """The trampoline strategy's current pages (trampoline.py `Site.page`), by named block."""

    def __init__(self, session):
        self.session = session

    def lookup(self, process, address: int) -> ToolLocation | None:
        serial = process.space.serial
        for (space_id, original), site in self.session.trampolines.sites.items():
            page = site.page
            if space_id != serial or page is None or not page.address <= address < page.here:
                continue
            target = exact_points(page, original, site.insn.next_address).get(address)
            if target is None:
                return ToolLocation(original, False)
            return ToolLocation(target, True, after=target != original)
        return None


def exact_points(page, original: int, next_address: int) -> dict[int, int]:
    """The exact points of a trampoline page -> the original address each stands for: its
    first byte and the copy's (the instruction not run yet), the jump back (it ran)."""
    points = {page.address: original}
    for block in page.blocks:
        if block.name == "OriginalInstruction_Copy":
            points[block.start] = original
        elif block.name == "Jump_NextInstruction":
            points[block.start] = next_address
    return points


def detach_address_map(session) -> ToolAddressMap:
    """The map the detacher moves PCs with: trampoline pages by block, jump trampolines, and
    every strategy's own source (a relocation table: `address_source`, when it has one)."""
    addrmap = ToolAddressMap(session.debug)
    addrmap.add_source(TrampolinePages(session))
    addrmap.add_source(JumpTrampolines(session))
    for strategy in session.strategies.built():
        source = getattr(strategy, "address_source", None)      # base.py: None if it has none
        source = source() if source is not None else None
        if source is not None:
            addrmap.add_source(source)
    return addrmap


class ThreadMover:
    def __init__(self, session, addrmap: ToolAddressMap):
        self.session = session
        self.debug = session.debug
        self.addrmap = addrmap

    def settle(self, process) -> tuple[list[MovedPc], list[str]]:
        """Every live thread of `process`'s space out of tool code: (PCs moved, why a thread
        could not be moved now)."""
        moved, stuck = [], []
        for thread in self.debug.space_threads(process):
            done = self._settle(thread)
            if isinstance(done, str):
                stuck.append(done)
            elif done is not None:
                moved.append(done)
        return moved, stuck

    def _settle(self, thread) -> MovedPc | str | None:
        process = thread.process
        arch = self.debug.arch(process)
        start = pc = self.debug.read_register(thread, arch.pc)
        steps = 0
        while True:
            target = self._exact_target(thread, pc)
            if target is not None:
                original, how = target
                self.debug.write_register(thread, arch.pc, original)
                how = how if not steps else f"stepped {steps}, then {how}"
                return MovedPc(process.pid, thread.tid, start, original, how)
            if self.session.returns.is_landing(process, pc):
                return f"tid {thread.tid} of pid {process.pid} is at the return landing with no pending return"
            if self.addrmap.lookup(process, pc) is None:       # out of tool code by itself
                return MovedPc(process.pid, thread.tid, start, pc, f"stepped {steps}") \
                    if steps else None
            if not self.debug.thread_can_step(thread) or steps >= MAX_MACHINE_STEPS:
                return (f"tid {thread.tid} of pid {process.pid} is at {pc:#x} in tool code "
                        f"and cannot be stepped out of it now ({thread.state})")
            if not self.debug.step_thread(thread) and not self.debug.is_alive_thread(thread):
                return None
            steps += 1
            pc = self.debug.read_register(thread, arch.pc)

    def _exact_target(self, thread, pc: int) -> tuple[int, str] | None:
        """The original address a thread at `pc` may be moved to at once, or None."""
        returns = self.session.returns
        process = thread.process
        if returns.is_landing(process, pc):
            sp = self.debug.read_register(thread, self.debug.arch(process).sp)
            pending = returns.returning(thread, sp)
            if pending is not None:
                returns.unwind(_Frame(sp), thread)           # pops it (and abandoned frames)
                return pending.return_address, "landing"
            return None             # no pending return: _settle reports the thread as stuck
        location = self.addrmap.lookup(process, pc)
        if location is not None and location.exact:
            return location.original, "after" if location.after else "exact"
        return None

    def original_of(self, process, address: int) -> int | None:
        """The original address an exact tool address stands for (signal frames), else None."""
        location = self.addrmap.lookup(process, address)
        return location.original if location is not None and location.exact else None


class _Frame:
    """What ReturnProbes.unwind reads and writes of a trap frame: sp in, ip out."""

    def __init__(self, sp: int):
        self.sp, self.ip = sp, None
