"""/proc/PID/fdinfo/N: what an open file's description holds (fs/proc/fd.c seq_show).

Every file shows its position, its f_flags (with O_CLOEXEC when the descriptor has the flag,
as Linux adds it from the fd table), the id of its mount and its inode number; a file whose
type says more (an inotify instance: fs/notify/fdinfo.c) adds its own lines, from the file's
`fdinfo_lines()`. The mount id is statx's (mountinfo.py).
"""
from ..flags import O_CLOEXEC
from .mountinfo import mount_id_of


def fdinfo_text(file, cloexec: bool) -> bytes:
    flags = getattr(file, "flags", 0) | (O_CLOEXEC if cloexec else 0)
    stat = getattr(file, "stat", None)
    st = stat() if stat is not None else None
    ino, dev = (st.ino, st.dev) if st is not None else (0, 0)
    text = b"pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\nino:\t%d\n" % (
        getattr(file, "position", 0), flags, mount_id_of(dev), ino)
    extra = getattr(file, "fdinfo_lines", None)
    return text + (extra() if extra is not None else b"")
