"""Whether a task is ptraced: Linux's task->ptrace (include/linux/sched.h), its PT_* bits
(include/linux/ptrace.h), and what a new task inherits of them (kernel/fork.c).

The sandbox's tracers are tools outside the guest (the strace client, the GDB stub), as strace
and gdb are outside the traced program; they set these bits through the door
(kernel_model/debug/ptrace_links.py) where the real ones call PTRACE_SEIZE or PTRACE_ATTACH with
their options. The kernel reads them where Linux asks "is it ptraced": an ignored signal is
queued for a ptraced task (kernel/signal.c sig_ignored) and ends its sleep
(signals/traced_calls.py); /proc/PID/status shows its TracerPid (fs/proc/array.c task_state).
The guest itself cannot make a tracer (no guest-to-guest ptrace is modeled).
"""
PT_PTRACED = 0x1
# PT_EVENT_FLAG(event) = 1 << (PT_OPT_FLAG_SHIFT + event): the tracer's PTRACE_O_TRACEFORK,
# TRACEVFORK and TRACECLONE, which make a new task of that kind traced by the same tracer
PT_OPT_FLAG_SHIFT = 3
PTRACE_EVENT_FORK, PTRACE_EVENT_VFORK, PTRACE_EVENT_CLONE = 1, 2, 3
PT_TRACE_FORK = 1 << (PT_OPT_FLAG_SHIFT + PTRACE_EVENT_FORK)
PT_TRACE_VFORK = 1 << (PT_OPT_FLAG_SHIFT + PTRACE_EVENT_VFORK)
PT_TRACE_CLONE = 1 << (PT_OPT_FLAG_SHIFT + PTRACE_EVENT_CLONE)
CSIGNAL, CLONE_PTRACE, CLONE_VFORK = 0xFF, 0x2000, 0x4000
CLONE_THREAD, CLONE_UNTRACED = 0x10000, 0x800000
SIGCHLD = 17

# The tools trace from outside the guest, from where the run's first program was started: the
# sandbox's init (process/proc.py INIT_PID, which imports this module's users), as natively
# strace and gdb are the parent of the program they start (and /proc/1 is there to be read, as
# the tracer's /proc/PID is).
TRACER_PID = 1


def is_ptraced(thread) -> bool:
    return bool(thread.ptrace & PT_PTRACED)


def child_ptrace(parent, flags: int) -> int:
    """The new task's task->ptrace (kernel/fork.c): kernel_clone names the event of the clone
    (vfork, a clone whose exit signal is not SIGCHLD, as a thread's, or a fork), unless
    CLONE_UNTRACED; copy_process's ptrace_init_task copies the parent's bits when the tracer
    asked for that event, or the caller passed CLONE_PTRACE."""
    traced = parent.ptrace
    if not traced & PT_PTRACED:
        return 0
    if flags & CLONE_VFORK:
        event = PT_TRACE_VFORK
    elif flags & CLONE_THREAD or flags & CSIGNAL != SIGCHLD:
        event = PT_TRACE_CLONE
    else:
        event = PT_TRACE_FORK
    if flags & CLONE_UNTRACED:
        event = 0
    return traced if traced & event or flags & CLONE_PTRACE else 0


def tracer_pid(thread) -> int:
    """/proc/PID/status's TracerPid (fs/proc/array.c task_state): 0 for an untraced task. (The
    model's /proc shows global pids: fs/proctext.py.)"""
    return TRACER_PID if is_ptraced(thread) else 0
