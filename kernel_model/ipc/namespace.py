"""The run's IPC namespace: the tables of each System V kind (ipc/namespace.c)."""
from .ids import IPCMNI
from .msg import new_queues
from .proctext import LIMITS, msg_text, sem_text, shm_text
from .sem import new_sets, undo
from .shm import SHM_DEST, new_segments


class IpcNamespace:
    def __init__(self, wakeup):
        self.msg = new_queues()
        self.sem = new_sets()
        self.shm = new_segments()
        self._wakeup = wakeup

    def publish(self, fs) -> None:
        """/proc/sysvipc/* and the limits in /proc/sys/kernel."""
        fs.add_proc_file(b"sysvipc/msg", lambda: msg_text(self.msg))
        fs.add_proc_file(b"sysvipc/sem", lambda: sem_text(self.sem))
        fs.add_proc_file(b"sysvipc/shm", lambda: shm_text(self.shm))
        for path, text in LIMITS.items():
            fs.add_sysctl(path, text)

    def detached(self, segment) -> None:
        """One attachment fewer (shmdt, exec, exit) or IPC_RMID: a segment marked for
        removal goes with its last attachment (shm_destroy)."""
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
            touched = {self.sem.objects.get(ident % IPCMNI) for ident, _ in proc.sem_undo}
            undo(proc.sem_undo, self.sem)
            for sem_set in touched:
                if sem_set is not None:
                    self._wakeup(sem_set)
