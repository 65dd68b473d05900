"""/proc/sysvipc/{msg,sem,shm}: one line per object under a header (ipc/util.c sysvipc_proc_show
and each kind's *_proc_show); the /proc/sys/kernel limits are limits.py's."""

MSG_HEADER = (b"       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid"
              b"      stime      rtime      ctime\n")
SEM_HEADER = b"       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n"
SHM_HEADER = (b"       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid"
              b"  cgid      atime      dtime      ctime                   rss                  swap\n")


def _perm(p) -> tuple:
    return (p.key - (1 << 32) if p.key >= 1 << 31 else p.key), p.id, p.mode & 0o7777


def msg_text(ids) -> bytes:
    lines = [b"%10d %10d  %4o  %10d %10d %5d %5d %5d %5d %5d %5d %10d %10d %10d\n"
             % (*_perm(q.perm), q.cbytes, len(q.messages), q.lspid, q.lrpid, q.perm.uid,
                q.perm.gid, q.perm.cuid, q.perm.cgid, q.stime, q.rtime, q.ctime)
             for _, q in sorted(ids.objects.items())]
    return MSG_HEADER + b"".join(lines)


def sem_text(ids) -> bytes:
    lines = [b"%10d %10d  %4o %10d %5d %5d %5d %5d %10d %10d\n"
             % (*_perm(s.perm), len(s.sems), s.perm.uid, s.perm.gid, s.perm.cuid, s.perm.cgid,
                s.otime, s.ctime)
             for _, s in sorted(ids.objects.items())]
    return SEM_HEADER + b"".join(lines)


def shm_text(ids) -> bytes:
    lines = [b"%10d %10d  %4o %21d %5d %5d  %5d %5d %5d %5d %5d %10d %10d %10d %21d %21d\n"
             % (*_perm(s.perm), s.size, s.cpid, s.lpid, s.nattch, s.perm.uid, s.perm.gid,
                s.perm.cuid, s.perm.cgid, s.atime, s.dtime, s.ctime,
                s.mapped_size if s.pages is not None else 0, 0)
             for _, s in sorted(ids.objects.items())]
    return SHM_HEADER + b"".join(lines)
