"""Resuming some threads only (GDB's vCont with actions for a subset of threads: `vCont;c:T`
under `set scheduler-locking on`, `vCont;s:T` under `scheduler-locking step`, a fork child
gdb keeps stopped while it follows the parent). Mixed into Debugger.

GDB manual, "Packets", vCont: threads that no action names "should remain stopped in all-stop
mode". The debugger holds them (the debug interface's suspend_thread, which keeps a thread off
the CPU without changing its state: a held sleeper still gets its wakeups and signals) until
the next resume, which releases every hold before it places its own.

A held thread may be the one the running ones wait for (a barrier, a mutex, a vfork child):
then nothing can run, and the kernel asks the run controller (`idle`) before it calls that a
deadlock. As under gdbserver, the program then waits for its user: `wait_for_user` (the GDB
stub's: until a Ctrl-C or the end of the connection) returns, the holds are released and the
stop is reported as the interrupt it was (SIGINT). Without a front end that waits, the stop is
reported at once.
"""
from .events import INTERRUPT, SIGINT, StopEvent


class UserHolds:
    wait_for_user = None            # callable() -> None: blocks until the user interrupts

    def hold_all_but(self, resumed) -> None:
        """Hold every debugged thread not in `resumed` until the next resume."""
        running = {t.tid for t in resumed}
        for thread in self.threads():
            if thread.tid not in running:
                self.debug.suspend_thread(thread)
                self._holds.append(thread)

    def release_holds(self) -> None:
        holds, self._holds = self._holds, []
        for thread in holds:
            self.debug.resume_thread(thread)

    def idle(self) -> bool:
        """Nothing can run (kernel_model/debug/run.py): True when that is because the user
        holds threads, after a stop is pending for it; False: a real deadlock or the end."""
        if not self._holds or self.detached:
            return False
        if self.wait_for_user is not None:
            self.wait_for_user()
        self.interrupt_requested = False
        if self.detached:                   # the user went away meanwhile (and killed it)
            return True
        held = {t.tid for t in self._holds}
        waiting = [t for t in self.threads() if t.tid not in held]   # what the user resumed
        thread = waiting[0] if waiting else self._holds[0]
        self.release_holds()
        if self.debug.is_alive_thread(thread):
            self.pending.append(StopEvent(INTERRUPT, thread=thread, signal=SIGINT))
        return True
