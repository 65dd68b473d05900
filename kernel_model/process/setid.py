"""The ids a set-user-ID or set-group-ID program gives the process that executes it."""

S_ISUID, S_ISGID, S_IXGRP = 0o4000, 0o2000, 0o010


def set_ids(st, no_new_privs: bool) -> tuple[int | None, int | None]:
    """fs/exec.c bprm_fill_uid: the (euid, egid) a set-user-ID / set-group-ID file gives, None
    for an id it leaves; set-group-ID counts only with group execute (otherwise it marks
    mandatory locking); no_new_privs turns both off."""
    if no_new_privs:
        return None, None
    euid = st.uid if st.mode & S_ISUID else None
    egid = st.gid if st.mode & S_ISGID and st.mode & S_IXGRP else None
    return euid, egid
