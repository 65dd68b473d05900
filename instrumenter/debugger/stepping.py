"""One ORIGINAL instruction per step, whatever the probes did to it (US 6,957,421).

The kernel runs the stepped thread one machine instruction per slice (slice_count 1, the
others held back: GDB's vCont;s:T;c lets them run only once the step is done). After each
machine instruction the thread's real PC is looked up in the tool address map (addrmap.py):
  * outside tool code: one original instruction ran — an emulate probe's int3 or LOCK
    patch emulated it in one trap, or a relocated copy jumped back or branched out;
  * at an exact point standing for ANOTHER original address (the next covered copy of a jump
    site): done as well, the PC is shown as that address; a jump back is stepped through;
  * anywhere else in tool code (the trampoline's own entry standing for the instruction not
    yet run, a native part's pushes, half of a relocated recipe): one more machine step.
A thread that sleeps in a system call during its step finishes it when it runs again; the
others run meanwhile (they were told to continue). A bound on machine steps keeps a tool
loop from hanging the debugger; the step then ends where it is.

`settle` is the same walk for a thread stopped by Ctrl-C inside tool code: it is moved to
the next exact point, so that what the user sees and resumes from is an original state.
"""
from .events import STEP, StopEvent

MAX_MACHINE_STEPS = 10_000


class Stepper:
    def __init__(self, debugger):
        self.debugger = debugger
        self.debug = debugger.debug
        self.active = None                  # the thread being stepped
        self._from = None                   # the original address the step started at
        self._event: StopEvent | None = None   # what to report when done
        self._settling = False
        self._steps = 0

    def start(self, thread, event: StopEvent | None = None) -> None:
        """Run one original instruction on `thread`, then report `event` (a STEP stop, or
        the watchpoint whose instruction it reruns: watchpoints.py)."""
        self._begin(thread, event or StopEvent(STEP, thread=thread), settling=False)

    def settle(self, thread, event: StopEvent) -> None:
        """Report `event` once `thread` is at an exact point (at once if it is)."""
        location = self.debugger.addrmap.lookup(thread.process, self.debugger.real_pc(thread))
        if location is None or location.exact:
            self.debugger.pending.append(event)
            return
        self._begin(thread, event, settling=True)

    def _begin(self, thread, event: StopEvent, *, settling: bool) -> None:
        self.active, self._event, self._settling, self._steps = thread, event, settling, 0
        self._from = self.debugger.pc(thread)

    def cancel(self) -> None:
        self.active = self._event = None

    def process_ended(self, process) -> None:
        if self.active is not None and self.active.process is process:
            self.cancel()

    # ---- run controller parts ----------------------------------------------------------------
    def choose(self, thread):
        stepped = self.active
        if stepped is not None and self.debug.thread_runnable(stepped):
            return stepped
        return thread

    def slice_count(self, thread, count: int) -> int:
        return 1 if thread is self.active else count

    def after_slice(self, thread) -> None:
        if thread is not self.active:
            return
        if not self.debug.is_alive_thread(thread):
            self.cancel()
            return
        self._steps += 1
        if self._done(thread) or self._steps >= MAX_MACHINE_STEPS:
            event = self._event
            self.cancel()
            self.debugger.pending.append(event)

    def _done(self, thread) -> bool:
        location = self.debugger.addrmap.lookup(thread.process, self.debugger.real_pc(thread))
        if location is None:
            return True
        if not location.exact:
            return False
        if self._settling:
            return True
        return not location.after and location.original != self._from
