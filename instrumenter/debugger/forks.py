"""Fork, vfork and vfork-done under the debugger (GDB's fork-events/vfork-events; US 7,185,320
[0036]-[0037] and US 7,415,699 on the child of a modified parent). Mixed into Debugger.

At a fork or vfork of a debugged process the child is debugged too, with the parent's
breakpoints (a fork child's memory copy would hold the int3s), and the parent stops right
after the call returns (FORK/VFORK, naming the child); the user then detaches the child or
keeps it (GDB's detach-on-fork, follow-fork-mode). When a vfork child execs or exits, its
parent stops once more (VFORK_DONE) before it runs on.

A vfork child borrows its parent's address space until then, and the parent waits: resuming
the parent alone while its child still holds the space is refused with the tracing facility's
VforkParentBusy (the patent: continuing the parent before the child has completed is an error),
rather than letting the debugger believe it runs.
"""
from kernel_model.debug import VforkParentBusy

from .events import FORK, VFORK, VFORK_DONE, StopEvent


class ForkEvents:
    report_forks = False          # the user wants fork events (GDB's fork-events+)
    report_vforks = False         # and vfork events (vfork-events+)

    def fork(self, parent, child) -> None:
        if self.report_forks:
            self._child_born(parent, child, FORK)

    def vfork(self, parent, child) -> None:
        if self.report_vforks:
            self._child_born(parent, child, VFORK)

    def _child_born(self, parent, child, kind: str) -> None:
        """(Without fork events the child is not debugged: it runs as a detached one.)"""
        if self.detached or parent.pid not in self.processes:
            return
        self.add_process(child, self.breakpoints.get(parent.pid, ()))
        thread = self.debug.current_thread()
        self.pending.append(StopEvent(kind, thread=thread, process=parent, child=child))
        self.debug.interrupt_guest()              # stop as the call returns to the parent

    def vfork_done(self, parent, child) -> None:
        if not self.report_vforks or self.detached or parent.pid not in self.processes \
                or not self.debug.is_alive(parent):       # killed first (GDB's kill): no stop
            return
        thread = child.vfork_parent if child.vfork_parent is not None else \
            self.debug.live_threads(parent)[0]
        self.pending.append(StopEvent(VFORK_DONE, thread=thread, process=parent, child=child))

    def detach_process(self, pid: int) -> None:
        """Stop debugging one process (GDB's D;PID): its breakpoints go, it runs on; the last
        one detaches the debugger."""
        process = self.processes.get(pid)
        if process is None:
            return
        for address in list(self.breakpoints.get(pid, ())):
            self.remove_breakpoint(address, process)
        for watch in list(self.watchpoints.get(pid, ())):
            self.remove_watchpoint(*watch, process)
        self.debug.ptrace_detach(process)
        self.pids.remove(pid)
        del self.processes[pid]
        self.breakpoints.pop(pid, None)
        if not self.pids:
            self.detach()

    def check_vfork_parents(self, resumed) -> None:
        """Refuse to resume a vfork parent alone while its child borrows its space: the
        tracing facility's rule and error (VforkParentBusy, kernel_model/debug/tracing/facility.py),
        one for every tool. `resumed` are the threads the user lets run; a child resumed with
        its parent, or not debugged (it runs anyway), lets the parent wake when it execs or
        exits."""
        running = {t.tid for t in resumed}
        for thread in resumed:
            child = self.debug.vfork_child_of(thread)
            if child is None or child.pid not in self.processes \
                    or any(t.tid in running for t in self.debug.live_threads(child)):
                continue                # no child, an undebugged one runs free, or resumed too
            raise VforkParentBusy(
                f"pid {thread.process.pid} is waiting for its vfork child {child.pid}, which "
                f"still borrows its address space: resume the child until it execs or exits",
                parent_pid=thread.process.pid, child_pid=child.pid)
