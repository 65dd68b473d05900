"""/proc/config.gz: the modeled kernel's build configuration, as CONFIG_IKCONFIG_PROC exposes
Linux's (kernel/configs.c: the .config, gzip'd, read-only).

Programs read it to learn what the kernel can do before they try: LTP's library looks for it
first (lib/tst_kconfig.c kconfig_path, then `zcat /proc/config.gz`) and skips a test whose
`needs_kconfigs` the kernel lacks (TCONF) instead of failing it. So the file must say what the
model does, not what a distribution kernel would: an option gating system calls is "y" exactly
when every one of its calls is implemented (syscalls/homes.py, the registry's table, read
without importing an implementation), and "is not set" otherwise, so a call added later turns
its option on with it. Features that are no system call of their own (namespaces, swap, the
block layer) are stated below with the reason.

The text is gzip'd once with a zero mtime and no file name, so every run shows the same bytes.
"""
import gzip
from functools import cache

from .syscalls.homes import HOMES
from .syscalls.impls.utsname import UTS_RELEASE

# Options the model has whatever its calls: the kernel is x86-64, runs i386 programs through
# its compat entry (IA32_EMULATION), has /proc and tmpfs (/dev/shm), and credentials per task.
ALWAYS = ("CONFIG_X86", "CONFIG_X86_64", "CONFIG_64BIT", "CONFIG_MMU", "CONFIG_IA32_EMULATION",
          "CONFIG_COMPAT", "CONFIG_PROC_FS", "CONFIG_IKCONFIG", "CONFIG_IKCONFIG_PROC",
          "CONFIG_SYSCTL", "CONFIG_MULTIUSER", "CONFIG_SHMEM", "CONFIG_TMPFS", "CONFIG_UNIX98_PTYS",
          "CONFIG_TIME_NS",         # time namespaces: unshare(CLONE_NEWTIME), time_namespace.py
          "CONFIG_NAMESPACES",      # time, pid and user namespaces (the kinds below)
          "CONFIG_PID_NS",          # clone/unshare(CLONE_NEWPID): pid_namespace.py
          "CONFIG_USER_NS",         # clone/unshare(CLONE_NEWUSER): user_namespace.py
          "CONFIG_NET_NS",          # clone/unshare(CLONE_NEWNET): net/namespace.py
          "CONFIG_DNOTIFY")         # fcntl's F_NOTIFY (kernel_model/notify/dnotify.py)

# Options the model lacks although some of their calls answer: there is one namespace of each
# other kind (unshare of one is EPERM, kernel_model/syscalls/impls/admin.py), no
# swap (swapon is EPERM), no block devices, and no mandatory locking (gone since Linux 5.15).
NEVER = ("CONFIG_UTS_NS", "CONFIG_IPC_NS", "CONFIG_SWAP", "CONFIG_BLOCK",
         "CONFIG_BLK_DEV_LOOP", "CONFIG_MANDATORY_FILE_LOCKING",
         "CONFIG_POSIX_AUX_CLOCKS")

# option -> the calls it gates (init/Kconfig, fs/Kconfig, net/Kconfig...).
GATED = {
    "CONFIG_SYSVIPC": ("ipc", "msgget", "msgctl", "msgsnd", "msgrcv", "semget", "semctl", "semop",
                       "shmget", "shmctl", "shmat", "shmdt"),
    "CONFIG_POSIX_MQUEUE": ("mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive"),
    "CONFIG_FUTEX": ("futex",),
    "CONFIG_EPOLL": ("epoll_create1", "epoll_ctl", "epoll_pwait"),
    "CONFIG_SIGNALFD": ("signalfd4",),
    "CONFIG_TIMERFD": ("timerfd_create", "timerfd_settime", "timerfd_gettime"),
    "CONFIG_EVENTFD": ("eventfd2",),
    "CONFIG_AIO": ("io_setup", "io_submit", "io_getevents", "io_destroy"),
    "CONFIG_IO_URING": ("io_uring_setup",),
    "CONFIG_POSIX_TIMERS": ("timer_create", "timer_settime", "clock_settime"),
    "CONFIG_MEMFD_CREATE": ("memfd_create",),
    "CONFIG_FHANDLE": ("name_to_handle_at", "open_by_handle_at"),
    "CONFIG_CHECKPOINT_RESTORE": ("kcmp",),      # and the IPC next_id values (ipc/ids.py)
    "CONFIG_FILE_LOCKING": ("flock",),
    "CONFIG_INOTIFY_USER": ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"),
    "CONFIG_FANOTIFY": ("fanotify_init", "fanotify_mark"),
    # permission events: notify/fanotify_perm.py
    "CONFIG_FANOTIFY_ACCESS_PERMISSIONS": ("fanotify_init", "fanotify_mark"),
    "CONFIG_KEYS": ("add_key", "request_key", "keyctl"),
    "CONFIG_USERFAULTFD": ("userfaultfd",),
    # x86-64's, with userfaultfd: UFFDIO_WRITEPROTECT (kernel_model/userfaultfd/ioctl.py)
    "CONFIG_HAVE_ARCH_USERFAULTFD_WP": ("userfaultfd",),
    "CONFIG_BPF_SYSCALL": ("bpf",),
    "CONFIG_SECCOMP": ("seccomp",),
    "CONFIG_SECCOMP_FILTER": ("seccomp",),        # kernel_model/seccomp/: filters included
    "CONFIG_MODULES": ("init_module", "finit_module", "delete_module"),
    "CONFIG_BSD_PROCESS_ACCT": ("acct",),
    "CONFIG_BSD_PROCESS_ACCT_V3": ("acct",),      # acct_v3 records (process/acct.py)
    "CONFIG_CROSS_MEMORY_ATTACH": ("process_vm_readv", "process_vm_writev"),
    "CONFIG_ADVISE_SYSCALLS": ("madvise", "fadvise64"),
    "CONFIG_MEMBARRIER": ("membarrier",),
    "CONFIG_RSEQ": ("rseq",),
    "CONFIG_QUOTACTL": ("quotactl",),
    "CONFIG_NET": ("socket", "socketpair"),
    "CONFIG_UNIX": ("socket", "socketpair"),
    "CONFIG_INET": ("socket",),
}


def enabled(option: str) -> bool:
    """Whether `option` is "y" in the modeled kernel's configuration."""
    if option in ALWAYS:
        return True
    calls = GATED.get(option)
    return calls is not None and all(call in HOMES for call in calls)


def config_text() -> bytes:
    """The .config, as `make` writes it: a header, then `CONFIG_X=y` or `# CONFIG_X is not set`."""
    lines = [b"#", b"# Automatically generated file; DO NOT EDIT.",
             b"# Linux/x86 " + UTS_RELEASE + b" Kernel Configuration", b"#"]
    for option in sorted({*ALWAYS, *NEVER, *GATED}):
        name = option.encode()
        lines.append(name + b"=y" if enabled(option) else b"# " + name + b" is not set")
    return b"\n".join(lines) + b"\n"


@cache
def config_gz() -> bytes:
    """/proc/config.gz's bytes: the same in every run (mtime 0; gzip.compress writes no name)."""
    return gzip.compress(config_text(), compresslevel=9, mtime=0)
