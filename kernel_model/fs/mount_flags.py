"""mount(2)'s flags and how a mount's per-mount flags are shown (include/uapi/linux/mount.h,
fs/namespace.c path_mount, fs/proc_namespace.c show_mnt_opts)."""

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_SYNCHRONOUS = 1, 2, 4, 8, 16
MS_REMOUNT, MS_MANDLOCK, MS_DIRSYNC, MS_NOSYMFOLLOW = 32, 64, 128, 256
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_MOVE, MS_REC = 1024, 2048, 4096, 8192, 16384
MS_SILENT = 32768
MS_UNBINDABLE, MS_PRIVATE, MS_SLAVE, MS_SHARED = 1 << 17, 1 << 18, 1 << 19, 1 << 20
MS_RELATIME, MS_STRICTATIME, MS_LAZYTIME = 1 << 21, 1 << 24, 1 << 25
MS_NOUSER = 1 << 31
MS_MGC_VAL, MS_MGC_MSK = 0xC0ED0000, 0xFFFF0000
PROPAGATION = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE

# the per-mount flags (MNT_*), as show_mnt_opts lists them, in its order
MNT_READONLY, MNT_NOSUID, MNT_NODEV, MNT_NOEXEC = 0x40, 0x1, 0x2, 0x4
MNT_NOATIME, MNT_NODIRATIME, MNT_RELATIME, MNT_NOSYMFOLLOW = 0x8, 0x10, 0x20, 0x80
ATIME = MNT_NOATIME | MNT_RELATIME
MS_ATIME = MS_NOATIME | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME
_SHOWN = ((MNT_NOSUID, b"nosuid"), (MNT_NODEV, b"nodev"), (MNT_NOEXEC, b"noexec"),
          (MNT_NOATIME, b"noatime"), (MNT_NODIRATIME, b"nodiratime"),
          (MNT_RELATIME, b"relatime"), (MNT_NOSYMFOLLOW, b"nosymfollow"))


def mnt_flags_of(flags: int) -> int:
    """path_mount: the per-mount flags of mount(2)'s flags (relatime unless told otherwise;
    strictatime clears both atime flags)."""
    mnt = 0 if flags & MS_NOATIME else MNT_RELATIME
    for ms, flag in ((MS_NOSUID, MNT_NOSUID), (MS_NODEV, MNT_NODEV), (MS_NOEXEC, MNT_NOEXEC),
                     (MS_NOATIME, MNT_NOATIME), (MS_NODIRATIME, MNT_NODIRATIME),
                     (MS_RDONLY, MNT_READONLY), (MS_NOSYMFOLLOW, MNT_NOSYMFOLLOW)):
        if flags & ms:
            mnt |= flag
    if flags & MS_STRICTATIME:
        mnt &= ~ATIME
    return mnt


def flags_of_options(text: bytes) -> int:
    """The per-mount flags a mount's options field shows (options_text's inverse)."""
    names = dict((name, flag) for flag, name in _SHOWN)
    names[b"ro"] = MNT_READONLY
    flags = 0
    for name in text.split(b","):
        flags |= names.get(name, 0)
    return flags


def options_text(mnt_flags: int) -> bytes:
    """mountinfo's mount options field: ro or rw, then show_mnt_opts."""
    shown = [b"ro" if mnt_flags & MNT_READONLY else b"rw"]
    shown += [name for flag, name in _SHOWN if mnt_flags & flag]
    return b",".join(shown)
