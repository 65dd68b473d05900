"""The stop-all single-step strategy: US 7,350,196's second prior scheme ([0005]).

"When a thread executing the instrumented program encounters the reserved trap, all threads
executing in the instrumented program are suspended while the thread that caused the trap
single-steps the original instruction, which is temporarily written over the trap instruction
... After the thread has single-stepped the original instruction, the reserved trap ... is
copied back over the original instruction in the code path. All threads executing in the
instrumented program then resume."

It is the singlestep baseline (singlestep.py: restore, TF, #DB, re-insert) with the window
closed to everybody else: on the hit every other thread that runs in the address space — the
process's threads, a vfork child borrowing the space, processes made with clone(CLONE_VM) as
samples/loss_procs makes them — is held through the debug interface (kernel_model/
debug/suspend.py) before the original bytes go back, and released after the #DB has written
the int3 again. Nothing can run the original instruction unobserved, so nothing is lost; the
price is that every other thread stands still for the window, which the loss experiment
reports as held thread-instructions: for each window, the guest instructions that ran during
it (the stepped instruction, plus whatever other processes ran meanwhile) times the threads
held.

A signal handler frame built for the stepping thread inside its window (its stepped
instruction faulted, or a signal arrived while a quantum switch left it between the int3 and
the step) ends the window early: the int3 goes back and the others are released, so a handler
that waits for another thread cannot deadlock on the hold. A handler that returns to the site
meets the int3 again and the probe reports that execution again, as uprobes does when the
instruction in its XOL slot faults (arch_uprobe_abort_xol: the probed address is hit anew).
As uprobes does (uprobe_deny_signal), signals sent to the stepping thread are held pending
for the window (the debug interface's hold_signals) and delivered once the int3 is back, so
an asynchronous signal never lands between the int3 and the step: without it a child's kill()
loop made 34-111 of 3000 hits report twice at quanta 1-11. Only the stepped instruction's own
fault ends the window early.
"""
from dataclasses import dataclass

from .singlestep import SingleStepProbes


@dataclass
class Hold:
    threads: list           # the threads held for this window, in creation order
    since: int              # instructions retired on the run's clock when the window opened


class StopAllSingleStepProbes(SingleStepProbes):
    def __init__(self, session):
        super().__init__(session)
        self.holds: dict[int, Hold] = {}          # tid of the stepping thread -> its hold
        self.windows = 0                          # windows opened with the others held
        self.held_thread_insns = 0                # sum over windows of length x threads held
        self.aborted = 0                          # windows a signal handler frame ended

    def _on_hit(self, site, frame, thread) -> bool:
        """Hold every other thread of the space, then the baseline's hit: hooks, the original
        bytes back, TF set, IRET to the site."""
        process = thread.process
        others = [t for t in self.debug.space_threads(process) if t is not thread]
        for other in others:
            self.debug.suspend_thread(other)
        self.holds[thread.tid] = Hold(others, self.debug.instructions_retired(process))
        self.debug.hold_signals(thread)          # uprobe_deny_signal: nothing lands mid-step
        self.windows += 1
        return super()._on_hit(site, frame, thread)

    def _on_debug_trap(self, frame, thread):
        claimed = super()._on_debug_trap(frame, thread)      # the int3 is back
        if claimed is not None:
            self._release(thread)
        return claimed

    def _release(self, thread) -> None:
        hold = self.holds.pop(thread.tid, None)
        if hold is None:
            return
        self.debug.release_signals(thread)
        now = self.debug.instructions_retired(thread.process)
        self.held_thread_insns += (now - hold.since) * len(hold.threads)
        for other in hold.threads:
            self.debug.resume_thread(other)

    # ---- a window that ends without its #DB ---------------------------------------------------
    def signal(self, process, thread, signal, info) -> None:
        """A handler frame for the stepping thread: write the int3 back and release the
        others now (module docstring)."""
        if thread is not None and thread.tid in self.stepping:
            self.aborted += 1
            self._abort(thread)

    def exit(self, process, status) -> None:
        """A process that dies inside its window (killed by its stepped instruction's fault,
        or by another process) must not leave the original exposed to the others sharing the
        space, nor leave them held."""
        for thread in process.threads:
            self._abort(thread)

    def end_windows(self, process) -> list:
        """Detach: the windows end (singlestep.py) and the threads they held run again."""
        ended = super().end_windows(process)
        for thread in ended:
            self._release(thread)
        return ended

    def _abort(self, thread) -> None:
        pending = self.stepping.pop(thread.tid, None)
        if pending is not None:
            process, site = pending
            if self.debug.patch_at(process, site.address) is not None:
                self.debug.relay_patch(process, site.address)          # the int3 is back
        self._release(thread)
