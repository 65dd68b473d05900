"""Exit and reaping (xv6 proc.c exit/wait; Linux kernel/exit.c).

A thread that exits clears its CLONE_CHILD_CLEARTID word and wakes futex waiters on it. When
the last thread of a process exits, the process becomes a zombie: its fds close, its children
are adopted by the nearest child subreaper or by init (pid 1's role: the kernel reaps them), a vfork parent resumes, and its own
parent is woken (wait4) and sent its exit signal (SIGCHLD). Init's children are reaped at once.
"""
import struct

from emu.memory import MemoryAccessError

from ..blocking import exit_channel
from ..fdtable import FdTable
from ..pid_namespace import forget_task
from .proc import INIT_PID, ZOMBIE

SI_USER = 0                  # include/uapi/asm-generic/siginfo.h: sent by kill(2) or the like
SIGKILL = 9


def exit_thread(kernel, thread) -> None:
    """One thread ends (exit, or part of exit_group); the process ends with its last thread."""
    if thread.state == ZOMBIE:
        return
    proc = thread.process
    if thread.clear_child_tid and proc.state != ZOMBIE:
        try:
            proc.machine.mem.write(thread.clear_child_tid, struct.pack("<i", 0))
        except MemoryAccessError:   # an unmapped address: Linux ignores the failure too
            pass
        kernel.futex_wake(proc, thread.clear_child_tid, 1)
    thread.state = ZOMBIE
    kernel.scheduler.remove(thread)
    kernel.task_limit.task_exited()


def _exit_files(kernel, proc) -> None:
    """exit_files(): the process lets go of its fd table; the fds close with the table's last
    user (put_files_struct), not while a process made with CLONE_FILES still uses it."""
    shared = any(other.fds is proc.fds and other is not proc and other.state != ZOMBIE
                 for other in kernel.processes.values())
    if shared:
        proc.fds = FdTable(proc.fds.limit)
    else:
        proc.fds.close_all()


def exit_process(kernel, proc, status: int) -> None:
    """All threads end; `status` is the wait status word."""
    if proc.state == ZOMBIE:
        return
    accounting = getattr(kernel, "acct", None)     # acct(2)'s file, while on (process/acct.py)
    if accounting is not None:                      # (with its threads' comm: they are listed)
        accounting.process_exited(proc, status, kernel.clock)
    for thread in list(proc.threads):
        exit_thread(kernel, thread)
    proc.exit_status = status
    proc.state = ZOMBIE
    _exit_files(kernel, proc)
    (proc.ipc_ns or kernel.ipc).exit(proc)           # its IPC namespace (namespaces.py)
    _wake_pidfd_waiters(kernel, proc)
    _release_vfork_parent(kernel, proc)
    if proc.pid_ns.reaper == proc.pid:
        _zap_pid_namespace(kernel, proc)
    _reparent_children(kernel, proc)
    kernel.debug.exit(proc, status)
    kernel.release_space(proc.space)
    parent = kernel.processes.get(proc.ppid)
    if parent is None or proc.ppid == INIT_PID or parent.state == ZOMBIE:
        reap(kernel, proc)
        return
    kernel.notify_parent(parent, proc)


def _wake_pidfd_waiters(kernel, proc) -> None:
    """Its pidfds are readable now. Their waiters count as woken before the SIGCHLD the exit
    also sends (Linux's poll finds the pidfd ready before it looks at signal_pending), so the
    signal does not turn their poll into EINTR."""
    channel = exit_channel(proc.pid)
    for thread in kernel.scheduler.threads:
        if any(channel == c or (isinstance(c, list) and channel in c) for c in thread.wait_channels):
            thread.restart["condition_met"] = True
    kernel.wakeup(channel)


def release_vfork_parent(kernel, proc) -> None:
    """exec or exit of a vfork child: its parent may run again (the vfork-done event)."""
    _release_vfork_parent(kernel, proc)


def _release_vfork_parent(kernel, proc) -> None:
    parent_thread = proc.vfork_parent
    if parent_thread is None:
        return
    proc.vfork_parent = None
    kernel.debug.vfork_done(parent_thread.process, proc)
    kernel.wakeup(("vfork", proc.pid))


def _reparent_children(kernel, proc) -> None:
    """kernel/exit.c forget_original_parent: the children go to the nearest living ancestor
    that is a child subreaper (PR_SET_CHILD_SUBREAPER), else to init, which reaps the zombies
    among them; each thread of a living child with a parent-death signal (PR_SET_PDEATHSIG) is
    sent it, from the dying parent (SEND_SIG_NOINFO: SI_USER)."""
    reaper = _subreaper(kernel, proc)
    for child in list(proc.children):
        if reaper is not None:
            child.ppid = reaper.pid
            reaper.children.append(child)
            if child.state == ZOMBIE:
                kernel.notify_parent(reaper, child)
        else:
            child.ppid = INIT_PID
            if child.state == ZOMBIE:
                reap(kernel, child)
        if child.state != ZOMBIE:
            _send_pdeath_signals(kernel, proc, child)
    proc.children = []


def _subreaper(kernel, proc):
    """find_new_reaper: a living child subreaper among its ancestors in its own pid namespace,
    else that namespace's init (pid_namespace.py), None for the sandbox's init."""
    ns = proc.pid_ns
    ancestor = kernel.processes.get(proc.ppid)
    while ancestor is not None and ancestor.pid != INIT_PID and ancestor.pid != ns.reaper \
            and ns.contains(ancestor.pid):
        if ancestor.child_subreaper and ancestor.state != ZOMBIE:
            return ancestor
        ancestor = kernel.processes.get(ancestor.ppid)
    pid1 = ns.lookup(1)
    init = kernel.processes.get(pid1) if pid1 not in (None, proc.pid) else None
    return init if init is not None and init.state != ZOMBIE else None


def _zap_pid_namespace(kernel, init) -> None:
    """zap_pid_ns_processes: the init of a pid namespace dies, so does every other process
    in it (SIGKILL), and no new one may join (PIDNS_ADDING)."""
    ns = init.pid_ns
    ns.adding = False
    for other in sorted(kernel.processes.values(), key=lambda p: p.pid):
        if other is not init and other.state != ZOMBIE and ns.contains(other.pid):
            kernel.signals.post(other, SIGKILL, info={"code": SI_USER, "pid": 0})


def _send_pdeath_signals(kernel, parent, child) -> None:
    for thread in child.live_threads():
        sig = thread.task_flags.pdeath_signal
        if sig:
            # from the dying parent's thread: its tgid and real uid (SEND_SIG_NOINFO)
            kernel.signals.post(child, sig, info={"code": SI_USER, "pid": parent.pid,
                                                  "uid": parent.creds.uid})


def reap(kernel, proc) -> None:
    """Remove a zombie for good (after wait4, or at once for init's children)."""
    kernel.processes.pop(proc.pid, None)
    for thread in proc.threads:
        forget_task(proc.pid_ns, thread.tid)
    forget_task(proc.pid_ns, proc.pid)
    kernel.fs.process_reaped(proc.pid)
    parent = kernel.processes.get(proc.ppid)
    if parent is not None and proc in parent.children:
        parent.children.remove(proc)
    kernel.reaped_count += 1
