"""`profile:EVENT:N` probes for `trapline trace` (issue 18; bpftrace's profile:hz:N, but in
virtual time): a record every N guest instructions (`insn`/`insns`), taken branches, system
calls or page faults, through the same profiling timer the sampler arms
(kernel_model/debug/timer.py). A record carries the virtual time, pid, tid, the interrupted PC
and its symbol, and with `:stack` the unwound return addresses as its args (frame pointers and
CFI, as the profiler's samples: unwind.py).

One timer serves a run, so a session takes one profile: probe (a second one is refused with
the reason). Only processes the session traces produce records.
"""
from __future__ import annotations

from ..errors import InstrumenterError
from ..probes.definitions import PROFILE



class ProfileProbes:
    def __init__(self, session):
        self.session, self.debug = session, session.debug
        self.probes = [p for p in session.probes if p.spec.kind == PROFILE]
        if len(self.probes) > 1:
            raise InstrumenterError(f"{self.probes[1].spec.text}: one profile: probe per run "
                                    f"(the run has one profiling timer; {self.probes[0].spec.text} "
                                    "has it)")
        self.unwinder = None
        if self.probes:
            # The unwinder (CFI through elftools' DWARF) only for a profile: probe: a trace
            # without one does not import it (issue 31: trace's start-up beside run's).
            from .hooks import LandingFixup
            from .unwind import Unwinder
            spec = self.probes[0].spec
            self.unwinder = Unwinder(self.debug, LandingFixup(self.debug, session.returns)) \
                if spec.stack else None
            self.debug.subscribe(self, events=("timer_tick", "fork", "exec"))
            self.debug.arm_timer(spec.interval, event=spec.event)

    def timer_tick(self, thread, frame) -> None:
        process = thread.process
        probe = self.probes[0]
        if not probe.enabled or not self.session.monitor.is_traced(process):
            return
        probe.hits += 1
        stack = ()
        if self.unwinder is not None:
            from .sampler import walk_registers
            unwound = self.unwinder.unwind(process, walk_registers(self.debug, process, frame),
                                           tid=thread.tid)
            stack = unwound.frames[1:]
        self.session.buffers.put((self.debug.instruction_count(), process.pid, thread.tid,
                                  probe.spec.text, frame.ip, stack, None, PROFILE,
                                  self.session.name_of(process, frame.ip)))

    # Records carry virtual time: processes followed after a fork or exec count too.
    def fork(self, parent, child) -> None:
        self.debug.count_instructions(child)

    def exec(self, process, path, argv) -> None:
        self.debug.count_instructions(process)
