"""fork, vfork and clone: new processes and threads (Linux kernel/fork.c, copy_process).

- fork: the child gets a copy of the address space (a new Space, the touched pages copied
  with the same protections and names), of the fd table (descriptions shared), of the signal
  dispositions, cwd and umask. It returns 0 in the child and the child's pid in the parent.
- vfork (CLONE_VM|CLONE_VFORK): the child runs in the parent's Space; the parent thread sleeps
  until the child execs or exits (the `vfork-done` event).
- CLONE_THREAD (pthread_create): a new thread of the same process, with its own stack, TLS and
  tid, sharing everything else.
"""
import struct
from dataclasses import replace

from .. import errno as E
from ..creds import CAP_SYS_ADMIN
from ..time_namespace import for_child as time_ns_for_child
from ..vdso.vvar import serve_vdso
from ..errno import GuestErrno
from ..cpu.gdt import I386_TLS_COUNT, I386_TLS_FIRST
from ..cpu.user_desc import LAYOUT, UserDesc
from .clone_fs import FsStruct
from .fork_ns import check_thread, child_creds, child_net_namespace, child_pid_namespace, numbers
from ..pid_namespace import attach_numbers
from .proc import Process, Thread
from ..sched_attrs import inherited as sched_inherited
from ..memory.space import Space
from ..memory.space_pool import code_areas

CSIGNAL = 0x000000FF
CLONE_VM, CLONE_FS, CLONE_FILES, CLONE_SIGHAND = 0x100, 0x200, 0x400, 0x800
CLONE_PIDFD, CLONE_PTRACE, CLONE_VFORK, CLONE_PARENT = 0x1000, 0x2000, 0x4000, 0x8000
CLONE_THREAD, CLONE_NEWNS, CLONE_SYSVSEM, CLONE_SETTLS = 0x10000, 0x20000, 0x40000, 0x80000
CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID, CLONE_DETACHED = 0x100000, 0x200000, 0x400000
CLONE_UNTRACED, CLONE_CHILD_SETTID, CLONE_IO = 0x800000, 0x1000000, 0x80000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
CLONE_NEWIPC = 0x08000000
NAMESPACE_FLAGS = 0x7E020000 & ~CLONE_NEWNS | CLONE_NEWNS     # CLONE_NEW*
OWN_NAMESPACES = CLONE_NEWNS | 0x04000000 | CLONE_NEWIPC     # mount, UTS, IPC: namespaces.py
MODELED_NAMESPACES = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET    # fork_ns.py
RLIMIT_CPU = 0


def copy_space(parent: Space, memory_limit: int, pool=None) -> Space:
    """A new address space with a copy of every user mapping and the TLS descriptors. A
    Machine from the pool (memory/space_pool.py) with the parent's text areas keeps its translations
    of the pages that are the same in the parent."""
    recycled = pool.take(parent.arch, code_areas(parent.vm.vmas), like=parent.machine.mem) \
        if pool is not None else None
    child = Space(parent.arch, memory_limit=memory_limit, recycled=recycled)
    try:
        _copy_areas(parent, child)
    except BaseException:
        child.release()
        raise
    child.vm.brk_start, child.vm.brk_end = parent.vm.brk_start, parent.vm.brk_end
    child.images = parent.images.copy()
    child.vdso = parent.vdso
    child.membarrier_state = parent.membarrier_state    # dup_mm copies the mm_struct
    for index, desc in enumerate(parent.gdt.entries):
        if desc != child.gdt.entries[index]:
            child.gdt.set_entry(index, desc)
    parent.ldt.copy_to(child.ldt)
    return child


def _copy_areas(parent: Space, child: Space) -> None:
    for vma in parent.vm.vmas:
        size = vma.end - vma.start
        if vma.dont_fork:
            child.vm.remove_range(vma.start, vma.end)     # dup_mmap skips VM_DONTCOPY areas
            continue
        if vma.shared:
            # MAP_SHARED: the child maps the same pages (kernel/fork.c dup_mmap; a shared
            # area is not copied on write), so either side's stores are the other's.
            child.vm.remove_range(vma.start, vma.end)
            child.machine.mem.share_from(parent.machine.mem, vma.start, size, vma.perms)
            # dup_mmap clears VM_LOCKED: locks are not inherited (mlock(2))
            child.vm.adopt_area(replace(vma, locked=False))
            continue
        kept = child.vm.vma_at(vma.start)
        if kept is not None and (kept.start, kept.end, kept.perms) == (vma.start, vma.end, vma.perms) \
                and not vma.wipe_on_fork:
            child.machine.mem.sync_from(parent.machine.mem, vma.start, size)
            child.vm.rename_area(kept, name=vma.name, offset=vma.offset, shared=vma.shared,
                                 locked=False)
            continue
        child.vm.map_area(vma.start, size, vma.perms, name=vma.name, offset=vma.offset,
                          shared=vma.shared)
        if vma.grows_down or vma.wipe_on_fork:        # vm_flags the child's area keeps
            child.vm.rename_area(child.vm.vma_at(vma.start), grows_down=vma.grows_down,
                                 wipe_on_fork=vma.wipe_on_fork)
        if vma.wipe_on_fork:          # VM_WIPEONFORK: the child's pages start zeroed
            continue
        if not vma.perms and parent.vm.backed_parts(vma.start, vma.end):
            child.vm.back(vma.start, vma.end)     # a PROT_NONE area with bytes keeps them
        # Only the pages the parent touched are copied (emu/host_pages.py): a fork of a shell
        # with an 8 MiB stack copies the few pages of it in use.
        child.machine.mem.copy_from(parent.machine.mem, vma.start, size)


def clone_registers(parent_thread: Thread, child_space: Space, *, stack: int = 0, tweak=None):
    """The child's register context: the parent's at the syscall, returning 0, with a new SP
    when one is given; `tweak(machine)` may adjust more (TLS) while the child's registers are
    loaded. When the child shares the parent's Machine, the parent's registers are put back."""
    parent_machine = parent_thread.process.machine
    context = parent_machine.save_context()
    machine = child_space.machine
    machine.restore_context(context)
    machine.set_reg("eax" if machine.arch.bits == 32 else "rax", 0)
    if stack:
        machine.sp = stack
    if tweak is not None:
        tweak(machine)
    child_context = machine.save_context()
    if machine is parent_machine:
        machine.restore_context(context)
    return child_context


def tls_setter(ctx, child: Thread, tls: int):
    """CLONE_SETTLS: x86-64 takes the FS base; i386 a `struct user_desc` (set_thread_area)."""
    if ctx.abi == "i386":
        # do_set_thread_area(p, -1, tls, can_allocate=0): no free-slot search for a clone
        desc = UserDesc.unpack(ctx.read(tls, LAYOUT.size))
        if not desc.okay() or not I386_TLS_FIRST <= desc.entry < I386_TLS_FIRST + I386_TLS_COUNT:
            raise GuestErrno(E.EINVAL)
        child.tls[desc.entry] = desc.descriptor()

    def apply(machine) -> None:
        if machine.arch.bits == 64:
            machine.set_reg("fs_base", tls)
            return
        space_gdt = ctx.proc.space.gdt
        for index, desc in child.tls.items():
            space_gdt.set_entry(index, desc)
        machine.set_reg("gs", (max(child.tls) << 3) | 3)
    return apply


def _check_combinations(flags: int) -> None:
    """copy_process's first checks, made before any namespace's permission: a new mount or
    user namespace cannot share the fs struct, a new IPC namespace the semaphore undo list, a thread shares the signal handlers, which
    share the memory, and a pidfd is for a process (Linux 6.1: no PIDFD_THREAD yet)."""
    if flags & CLONE_FS and flags & (CLONE_NEWNS | CLONE_NEWUSER):
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_SYSVSEM and flags & CLONE_NEWIPC:
        raise GuestErrno(E.EINVAL)                # a semaphore undo list across IPC namespaces
    if flags & CLONE_THREAD and not flags & CLONE_SIGHAND or flags & CLONE_SIGHAND and not flags & CLONE_VM:
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_PIDFD and flags & (CLONE_DETACHED | CLONE_THREAD):
        raise GuestErrno(E.EINVAL)


def do_clone(kernel, ctx, flags: int, stack: int, parent_tid: int, child_tid: int, tls: int,
             set_tid: tuple = ()) -> int:
    parent = ctx.proc
    _check_combinations(flags)
    check_thread(parent, flags)
    if flags & NAMESPACE_FLAGS & ~(OWN_NAMESPACES | MODELED_NAMESPACES):
        raise GuestErrno(E.EPERM)                 # a kind not modeled: refused (creds.py)
    if flags & CLONE_THREAD:
        kernel.check_task_limit(ctx.thread)
        return _new_thread(kernel, ctx, flags, stack, parent_tid, child_tid, tls)
    # The pre-fork event (US 7,185,320 FIG. 4) comes before anything that can still fail: the tool
    # learns of the attempt and the pid the child will get; a failure is reported after it.
    child_pid = kernel.peek_next_pid()
    kernel.debug.pre_fork(parent, child_pid, vfork=bool(flags & CLONE_VFORK))
    try:
        kernel.check_task_limit(ctx.thread)
        return _new_process(kernel, ctx, flags, stack, parent_tid, child_tid, tls, set_tid)
    except GuestErrno as failure:
        kernel.debug.fork_failed(parent, child_pid, failure.errno)
        raise


def _new_process(kernel, ctx, flags: int, stack: int, parent_tid: int, child_tid: int, tls: int,
                 set_tid: tuple) -> int:
    parent = ctx.proc
    creds = child_creds(kernel, parent, flags)
    if flags & OWN_NAMESPACES and not creds.capable_here(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)                 # copy_namespaces: ns_capable(CAP_SYS_ADMIN)
    pid_ns = child_pid_namespace(kernel, parent, creds, flags)
    net_ns = child_net_namespace(kernel, parent, creds, flags)
    plan = numbers(kernel, pid_ns, creds, set_tid)
    space = parent.space if flags & CLONE_VM else copy_space(parent.space, kernel.config.memory_limit,
                                                                 kernel.space_pool)
    pid = plan[-1][1] or kernel.allocate_pid()
    attach_numbers(plan, pid)
    # CLONE_PARENT: the child is the caller's sibling, with the caller's exit signal
    # (copy_process: real_parent = current->real_parent, exit_signal = group_leader's)
    sibling = bool(flags & CLONE_PARENT)
    real_parent = kernel.processes.get(parent.ppid) if sibling else parent
    child = Process(pid=pid, ppid=parent.ppid if sibling else parent.pid, space=space,
                    fds=parent.fds if flags & CLONE_FILES else parent.fds.copy(),
                    cwd=parent.cwd, root=parent.root, umask=parent.umask, pgid=parent.pgid,
                    fs_struct=parent.fs_struct if flags & CLONE_FS else FsStruct(),
                    sid=parent.sid,
                    exe=parent.exe, argv=list(parent.argv), image=parent.image,
                    sigactions=dict(parent.sigactions), rlimits=dict(parent.rlimits),
                    exit_signal=parent.exit_signal if sibling else flags & CSIGNAL,
                    personality=parent.personality,
                    groups=parent.groups, creds=creds, **time_ns_for_child(parent),
                    pid_ns=pid_ns, pid_ns_for_children=pid_ns, net_ns=net_ns,
                    mount_ns=parent.mount_ns, uts_ns=parent.uts_ns, ipc_ns=parent.ipc_ns,
                    shm_attached=dict(parent.shm_attached) if space is not parent.space else {})
    if flags & OWN_NAMESPACES:                      # copy_namespaces: new ones for the flags
        from .namespaces import unshare_namespaces
        unshare_namespaces(kernel, child, flags)
    child.start_ns = kernel.clock.monotonic_ns()
    if RLIMIT_CPU in child.rlimits:                 # counted from 0 in the child
        from .cpu_limit import arm as arm_cpu_limit
        arm_cpu_limit(child, kernel.clock.monotonic_ns())
    if space is not parent.space:
        kernel.install_space(space)
        kernel.debug.copy_breakpoints(parent.space, space)
        kernel.ipc.forked(child)
        if child.time_ns is not parent.time_ns:
            serve_vdso(child)                       # timens_on_fork: the new namespace's clocks
    # copy_process keeps the alternate signal stack, but not for a child sharing the memory
    # without waiting for it (sas_ss_reset: its stack would be the parent's)
    altstack = ctx.thread.sigaltstack if flags & (CLONE_VM | CLONE_VFORK) != CLONE_VM else (0, 2, 0)
    thread = Thread(tid=pid, process=child, kstack_top=space.kstack_top(pid),
                    sigaltstack=altstack,
                    sigmask=ctx.thread.sigmask, tls=dict(ctx.thread.tls), comm=ctx.thread.comm,
                    task_flags=ctx.thread.task_flags.for_child(), **sched_inherited(ctx.thread),
                    ptrace=_ptrace_of_child(ctx.thread, flags))
    tweak = tls_setter(ctx, thread, tls) if flags & CLONE_SETTLS else None
    thread.context = clone_registers(ctx.thread, space, stack=stack, tweak=tweak)
    _restore_tls(ctx)
    child.threads.append(thread)
    _settid(ctx, flags, thread, parent_tid, child_tid, space)
    if real_parent is not None:
        real_parent.children.append(child)
    kernel.add_process(child, thread)
    nr = parent.pid_ns.nr(pid)                 # the child as its parent sees it
    if flags & CLONE_VFORK:
        child.vfork_parent = ctx.thread
        kernel.debug.vfork(parent, child)
        kernel.sleep_after_return(ctx.thread, ("vfork", child.pid), f"vfork child {child.pid} to exec or exit")
    else:
        kernel.debug.fork(parent, child)
    return nr


def _settid(ctx, flags, thread, parent_tid, child_tid, space) -> None:
    """The parent's word gets the tid as the parent sees it, the child's as the child does
    (kernel_clone's pid_vnr, schedule_tail's task_pid_vnr)."""
    if flags & CLONE_PARENT_SETTID and parent_tid:
        ctx.write(parent_tid, struct.pack("<i", ctx.proc.pid_ns.nr(thread.tid)))
    if flags & CLONE_CHILD_SETTID and child_tid:
        space.machine.mem.write(child_tid, struct.pack("<i", thread.process.pid_ns.nr(thread.tid)))
    if flags & CLONE_CHILD_CLEARTID:
        thread.clear_child_tid = child_tid


def _ptrace_of_child(parent, flags: int) -> int:
    """The new task's task->ptrace (kernel_model/ptraced.py): none of an untraced parent's."""
    if not parent.ptrace:
        return 0
    from ..ptraced import child_ptrace
    return child_ptrace(parent, flags)


def _restore_tls(ctx) -> None:
    """The GDT holds the running thread's TLS descriptors (Linux reloads them on every switch)."""
    for index, desc in ctx.thread.tls.items():
        ctx.proc.space.gdt.set_entry(index, desc)


def _new_thread(kernel, ctx, flags, stack, parent_tid, child_tid, tls) -> int:
    proc = ctx.proc
    plan = numbers(kernel, proc.pid_ns, proc.creds, ())
    tid = kernel.allocate_pid()
    attach_numbers(plan, tid)
    thread = Thread(tid=tid, process=proc, kstack_top=proc.space.kstack_top(len(proc.threads)),
                    sigmask=ctx.thread.sigmask, tls=dict(ctx.thread.tls), comm=ctx.thread.comm,
                    task_flags=ctx.thread.task_flags.for_child(), **sched_inherited(ctx.thread),
                    ptrace=_ptrace_of_child(ctx.thread, flags))
    tweak = tls_setter(ctx, thread, tls) if flags & CLONE_SETTLS else None
    thread.context = clone_registers(ctx.thread, proc.space, stack=stack, tweak=tweak)
    _restore_tls(ctx)
    _settid(ctx, flags, thread, parent_tid, child_tid, proc.space)
    proc.threads.append(thread)
    kernel.add_thread(thread)
    return proc.pid_ns.nr(tid)
