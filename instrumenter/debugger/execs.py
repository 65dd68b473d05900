"""Exec under the debugger (GDB's exec-events, `catch exec`; the patent's debugger reports
fork/vfork/exec events). Mixed into Debugger.

A debugged process that execs keeps being debugged in its new image. Its breakpoints were
addresses in the old image, whose space is gone: a debugger that reports execs drops them, and
its user (GDB re-reads the symbols of the new program and inserts its breakpoints again) stops
the process right at the new program's first instruction — the exec event, naming the file.
One that does not report them (a GDB without exec-events) sets the same addresses again in the
new space, as int3s it could not know about would have been lost with the old text.

A step that runs the execve ends in the exec stop: there is no original instruction after it
in the old program to stop at.
"""
from .events import EXEC, StopEvent


class ExecEvents:
    report_execs = False          # the user wants exec events (GDB's exec-events+)

    def exec(self, process, path, argv) -> None:
        if self.detached or process.pid not in self.processes:
            return
        self.stepper.process_ended(process)
        if not self.report_execs:
            self._arm_space(process)
            return
        self.breakpoints[process.pid] = set()
        self.watchpoints[process.pid] = set()     # their hooks went with the old space
        threads = self.debug.live_threads(process)       # the one that exec'd is the only one
        self.pending.append(StopEvent(EXEC, thread=threads[0], process=process,
                                      path=self.debug.executable_path(process)))
        self.debug.interrupt_guest()          # stop before the new program's first instruction
