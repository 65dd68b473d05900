"""/proc/PID/uid_map, gid_map and setgroups: a process's user namespace's id maps and its
setgroups switch (fs/proc/base.c proc_uid_map_operations..., kernel/user_namespace.c
uid_m_show, map_write, proc_setgroups_show/write; the rules are user_namespace.py's).

The reader's credentials are the opener's (the /proc tree is built for the process that looks
it up, as Linux checks a map's writer by file->f_cred): the maps' lower ids show as the
reader's namespace sees them, and a write is judged by the reader's capabilities. The files
belong to the process's effective ids while it is dumpable (task_dump_owner), so a user may
write the maps of the namespace it just made.
"""
from ..user_namespace import show_map, show_setgroups, write_map, write_setgroups, INITIAL


IDMAP_NAMES = (b"uid_map", b"gid_map", b"setgroups")     # what idmap_files makes


def idmap_files(fs, proc, reader, base: bytes) -> dict:
    """The three files of `proc`'s folder, as `reader` opens them."""
    def ns():
        return proc.namespaces()[b"user"]

    def reader_creds():
        return getattr(reader, "creds", None)

    def reader_ns():
        creds = reader_creds()
        return creds.user_ns if creds is not None else INITIAL

    def owned(node):
        node.meta.uid, node.meta.gid = proc.dump_owner()
        return node

    def map_file(name: bytes, which: str):
        return owned(fs.file(base + b"/" + name, lambda: show_map(reader_ns(), ns(), which), 0o644,
                             lambda position, data: write_map(reader_creds(), ns(), which, position, data)))
    return {
        b"uid_map": map_file(b"uid_map", "uid_map"),
        b"gid_map": map_file(b"gid_map", "gid_map"),
        b"setgroups": owned(fs.file(base + b"/setgroups", lambda: show_setgroups(ns()), 0o644,
                                    lambda position, data: write_setgroups(reader_creds(), ns(), position, data))),
    }
