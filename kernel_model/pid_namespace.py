"""PID namespaces (kernel/pid_namespace.c, kernel/pid.c).

A task has a number in its own pid namespace and in every one above it (struct pid's numbers,
one per level). The model keeps its pids global: a task's pid is its number in the initial
namespace, which the rest of the kernel uses; a namespace below the initial one keeps the
numbers its tasks have there, both ways. What a task sees of another is that task's number in
the viewer's namespace (pid_nr_ns), 0 when it lies outside (its parent, for a namespace's
first process); a number given by a task is looked up in the task's namespace (find_vpid).

A new namespace is made by clone or unshare(CLONE_NEWPID) (the caller's children are born in
it, not the caller); its first process gets number 1 and is its child reaper: orphans of the
namespace go to it, and when it dies every other process of the namespace is killed
(zap_pid_ns_processes) and no process can be added any more (PIDNS_ADDING: fork is ENOMEM).
Numbers are handed out after the namespace's last one (ns_last_pid), from 1, as idr_alloc_cyclic
does; clone3's set_tid asks for given ones.
"""
from . import errno as E
from .errno import GuestErrno
from .user_namespace import INITIAL as INITIAL_USER_NS

PID_MAX_DEFAULT = 0x400000          # pid_max on a 64-bit kernel with many CPUs (/proc/sys)
RESERVED_PIDS = 300                 # kernel/pid.c: where the numbers wrap to
MAX_PID_NS_LEVEL = 32
INITIAL_PID_NS_INUM = 0xEFFFFFFC    # PROC_PID_INIT_INO


class PidNamespace:
    """One pid namespace: its place in the tree and its tasks' numbers there."""

    def __init__(self, inum: int, parent: "PidNamespace | None", user_ns=None):
        self.inum = inum
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        # the initial namespace (no parent): a task's number there is its global pid. A field,
        # not a property: getpid asks it at every call
        self.initial = parent is None
        self.user_ns = user_ns              # the creator's (user_namespace.py), its owner
        self.nr_of: dict[int, int] = {}     # global pid -> number here
        self.pid_of: dict[int, int] = {}    # number here -> global pid
        self.last_pid = 0
        self.reaper: int | None = None      # its init's global pid, once it has one
        self.adding = True                  # PIDNS_ADDING: until its init dies

    def nr(self, pid: int) -> int:
        """pid_nr_ns: the task's number here, 0 when it is not in this namespace."""
        return pid if self.initial else self.nr_of.get(pid, 0)

    def lookup(self, nr: int) -> int | None:
        """find_pid_ns: the global pid of number `nr` here, None when no task has it."""
        return nr if self.initial else self.pid_of.get(nr)

    def contains(self, pid: int) -> bool:
        return self.initial or pid in self.nr_of

    def ancestors(self):
        """This namespace and every one above it, up to the initial one."""
        ns = self
        while ns is not None:
            yield ns
            ns = ns.parent

    def is_descendant_of(self, other: "PidNamespace") -> bool:
        return any(ns is other for ns in self.ancestors())

    def next_free(self, pid_max: int) -> int:
        """idr_alloc_cyclic from last_pid + 1: the first free number, wrapping to
        RESERVED_PIDS (or 1 before any wrap)."""
        nr = self.last_pid + 1
        for _ in range(pid_max):
            if nr >= pid_max:
                nr = RESERVED_PIDS if self.last_pid >= RESERVED_PIDS else 1
            if nr not in self.pid_of:
                return nr
            nr += 1
        raise GuestErrno(E.EAGAIN)

    def attach(self, pid: int, nr: int) -> None:
        self.nr_of[pid], self.pid_of[nr] = nr, pid
        self.last_pid = nr
        if nr == 1:
            self.reaper = pid              # its init: the child reaper (pid_ns.child_reaper)

    def detach(self, pid: int) -> None:
        nr = self.nr_of.pop(pid, None)
        if nr is not None:
            self.pid_of.pop(nr, None)


INITIAL = PidNamespace(INITIAL_PID_NS_INUM, None, INITIAL_USER_NS)


def new_namespace(kernel, parent: PidNamespace, user_ns) -> PidNamespace:
    """create_pid_namespace: below `parent`, at most MAX_PID_NS_LEVEL deep (ENOSPC)."""
    if parent.level + 1 > MAX_PID_NS_LEVEL:
        raise GuestErrno(E.ENOSPC)
    return PidNamespace(next(kernel.ns_inums), parent, user_ns)


def plan_numbers(ns: PidNamespace, set_tid: tuple, may_restore, taken_globally,
                 pid_max: int = PID_MAX_DEFAULT) -> list:
    """alloc_pid's numbers for a task born in `ns`, one per level from `ns` up: (namespace,
    number), None for the initial namespace's when the kernel picks it. set_tid[i] is wanted
    at level ns.level - i (no more than the levels: EINVAL): in range and, but for a
    namespace's first task, not 1 before it has an init (EINVAL), allowed (`may_restore`:
    EPERM), free (EEXIST). A namespace whose init died takes no task (ENOMEM)."""
    if len(set_tid) > ns.level + 1:
        raise GuestErrno(E.EINVAL)
    plan = []
    for depth, level_ns in enumerate(ns.ancestors()):
        nr = None
        if depth < len(set_tid):
            nr = set_tid[depth]
            if not 0 < nr < pid_max or nr != 1 and level_ns.reaper is None and not level_ns.initial:
                raise GuestErrno(E.EINVAL)
            if not may_restore(level_ns):
                raise GuestErrno(E.EPERM)
            if (taken_globally(nr) if level_ns.initial else nr in level_ns.pid_of):
                raise GuestErrno(E.EEXIST)
        elif not level_ns.initial:
            nr = level_ns.next_free(pid_max)
        if not level_ns.adding:
            raise GuestErrno(E.ENOMEM)
        plan.append((level_ns, nr))
    return plan


def attach_numbers(plan: list, pid: int) -> None:
    """The task of global pid `pid` takes its planned numbers below the initial namespace."""
    for level_ns, nr in plan:
        if not level_ns.initial:
            level_ns.attach(pid, nr)


def forget_task(ns: PidNamespace, pid: int) -> None:
    """free_pid: the task's numbers go."""
    for level_ns in ns.ancestors():
        if not level_ns.initial:
            level_ns.detach(pid)


def global_pid(proc, nr: int) -> int:
    """find_vpid for the calls that name a task by number: the global pid of `proc`'s
    namespace's number `nr`, -1 when none has it (no task matches), 0 kept (the caller)."""
    if nr == 0 or proc.pid_ns.initial:
        return nr
    found = proc.pid_ns.lookup(nr)
    return -1 if found is None else found
