"""A tool traces threads as ptrace does (part of the debug interface, kernel_model/debug/).

strace and gdb (and gdbserver) reach Linux through ptrace: PTRACE_SEIZE or PTRACE_ATTACH (or the
child's PTRACE_TRACEME) makes the task ptraced, with options that make its new threads
(PTRACE_O_TRACECLONE) and children (PTRACE_O_TRACEFORK, TRACEVFORK) traced too, and
PTRACE_DETACH ends it. The sandbox's strace client and GDB stub say the same here; the kernel
keeps it as Linux does, in each task (kernel_model/ptraced.py: task->ptrace, inherited at clone),
and behaves as it does for a ptraced task: an ignored signal is queued and ends the task's
sleep in the calls that return EINTR (kernel/signal.c sig_ignored, signals/traced_calls.py),
/proc/PID/status shows a TracerPid. A tool that only watches (uprobes-like probes, the
profiler: bpftrace and perf do not ptrace) sets nothing here, and its program runs as untraced.
"""
from ..process.proc import ZOMBIE
from ..ptraced import PT_PTRACED, PT_TRACE_CLONE, PT_TRACE_FORK, PT_TRACE_VFORK, is_ptraced


class PtraceLinks:
    def ptrace_attach(self, target, *, follow_threads: bool = True, follow_forks: bool = False) -> None:
        """`target` (a Process: each of its live threads; a Thread: that one) is ptraced from
        now on. `follow_threads`: the threads it creates are too (PTRACE_O_TRACECLONE, gdb's and
        strace -f's); `follow_forks`: its fork and vfork children too (strace -f). Without them
        only the task itself is, as strace without -f traces the program's first thread."""
        flags = PT_PTRACED | (PT_TRACE_CLONE if follow_threads else 0) | \
            (PT_TRACE_FORK | PT_TRACE_VFORK if follow_forks else 0)
        for thread in _threads_of(target):
            thread.ptrace = flags

    def ptrace_detach(self, target) -> None:
        """`target` (a Process or a Thread) is not traced any more (PTRACE_DETACH)."""
        for thread in _threads_of(target):
            thread.ptrace = 0

    @staticmethod
    def is_ptraced(thread) -> bool:
        return is_ptraced(thread)


def _threads_of(target) -> list:
    threads = getattr(target, "threads", None)
    if threads is None:                                 # a Thread
        return [target]
    return [t for t in threads if t.state != ZOMBIE]
