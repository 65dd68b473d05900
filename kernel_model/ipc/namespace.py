"""The run's IPC namespace: the tables of each System V kind (ipc/namespace.c).

Each kind's table, and its module, comes when the kind is first used (issue 31, start-up: the
three modules weighed on a static hello's start, which uses none of them). A process that
never attached a segment nor took a SEM_UNDO adjustment leaves through exec, exit and fork
without touching a table."""
import functools

from ..fs.sysctl_write import int_in, int_writer
from .limits import IpcLimits


class IpcNamespace:
    def __init__(self, wakeup):
        self._wakeup = wakeup
        self.limits = IpcLimits()

    @functools.cached_property
    def msg(self):
        from .msg import new_queues
        return new_queues(lambda: self.limits.msgmni)

    @functools.cached_property
    def sem(self):
        from .sem import new_sets
        return new_sets(lambda: self.limits.semmni)

    @functools.cached_property
    def mqueues(self):
        from .mqueue import Mqueues
        return Mqueues()

    @functools.cached_property
    def shm(self):
        from .shm import new_segments
        return new_segments(lambda: self.limits.shmmni)

    def publish(self, fs) -> None:
        """/proc/sysvipc/* and the limits in /proc/sys/kernel (writable: limits.py)."""
        fs.add_proc_file(b"sysvipc/msg", lambda: _proctext().msg_text(self.msg))
        fs.add_proc_file(b"sysvipc/sem", lambda: _proctext().sem_text(self.sem))
        fs.add_proc_file(b"sysvipc/shm", lambda: _proctext().shm_text(self.shm))
        for path, (text, write) in self.limits.sysctls().items():
            fs.add_sysctl(path, text, write)
        for kind in ("msg", "sem", "shm"):
            fs.add_sysctl(b"kernel/%s_next_id" % kind.encode(), *self._next_id(kind))

    def _next_id(self, kind: str):
        """ipc/ipc_sysctl.c's {msg,sem,shm}_next_id (CONFIG_CHECKPOINT_RESTORE): 0444, which
        ipc_permissions widens to writable for CAP_CHECKPOINT_RESTORE; proc_dointvec_minmax
        from 0 to INT_MAX (-1, unset, is read but not written)."""
        def text() -> bytes:
            return b"%d" % getattr(self, kind).next_id

        def put(value: int) -> None:
            getattr(self, kind).next_id = value
        return text, int_writer(put, int_in(0, (1 << 31) - 1)), 0o444

    def detached(self, segment) -> None:
        """One attachment fewer (shmdt, exec, exit) or IPC_RMID: a segment marked for
        removal goes with its last attachment (shm_destroy)."""
        from .shm import SHM_DEST           # (a segment exists: its module is there)
        if segment.perm.mode & SHM_DEST and segment.nattch == 0 and not segment.perm.deleted:
            self.shm.remove(segment)
            segment.destroy()

    def detach_all(self, proc) -> None:
        """exec and exit drop the process's attachments (its address space goes)."""
        attached, proc.shm_attached = proc.shm_attached, {}
        for segment in attached.values():
            segment.nattch -= 1
            self.detached(segment)

    def forked(self, child) -> None:
        """fork: the child has the parent's attachments (shm_open on each vma)."""
        for segment in child.shm_attached.values():
            segment.nattch += 1

    def exit(self, proc) -> None:
        """A process ends: its attachments go, its SEM_UNDO adjustments are applied
        (exit_sem), sleepers woken."""
        self.detach_all(proc)
        if proc.sem_undo:
            from .ids import IPCMNI
            from .sem import undo
            touched = {self.sem.objects.get(ident % IPCMNI) for ident, _ in proc.sem_undo}
            undo(proc.sem_undo, self.sem)
            for sem_set in touched:
                if sem_set is not None:
                    self._wakeup(sem_set)


def _proctext():
    from . import proctext
    return proctext
