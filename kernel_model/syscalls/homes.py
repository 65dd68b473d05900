"""Where each system call is implemented: the module of kernel_model/syscalls/impls/ whose
`@syscall` registers it, so that a module is imported when one of its calls is first made or
looked up, not at every start (issue 31: importing the 35 modules and what they import,
sockets and the network among them, weighed on a static hello's start-up, which makes
four calls).

tests/unit/kernel_model/syscalls/test_homes.py checks this table against the registrations
themselves: a call registered elsewhere, or missing here, fails it.
"""

_BY_MODULE = {
    "acct": "acct",
    "admin": "setns swapoff swapon unshare",
    "affinity": "sched_getaffinity sched_setaffinity",
    "aio": "io_cancel io_destroy io_getevents io_pgetevents io_pgetevents_time64 io_setup "
        "io_submit",
    "cachestat": "cachestat",
    "capabilities": "capget capset",
    "chmod": "chmod fchmod fchmodat fchmodat2",
    "clockset": "adjtimex clock_adjtime clock_adjtime64 clock_settime clock_settime64 settimeofday "
        "stime",
    "close_range": "close_range",
    "copy_file_range": "copy_file_range",
    "credentials": "getegid getegid32 geteuid geteuid32 getgid getgid32 getresgid getresgid32 "
        "getresuid getresuid32 getuid getuid32 setfsgid setfsgid32 setfsuid setfsuid32 setgid "
        "setgid32 setregid setregid32 setresgid setresgid32 setresuid setresuid32 setreuid "
        "setreuid32 setuid setuid32",
    "dirents": "getdents getdents64",
    "epoll": "epoll_create epoll_create1 epoll_ctl epoll_pwait epoll_pwait2 epoll_wait",
    "eventfd": "eventfd eventfd2",
    "fadvise": "fadvise64 fadvise64_64",
    "fallocate": "fallocate",
    "fanotify": "fanotify_init fanotify_mark",
    "fhandle": "name_to_handle_at open_by_handle_at",
    "file_attr": "file_getattr file_setattr",
    "fileio": "_llseek close dup dup2 dup3 fcntl fcntl64 ftruncate ftruncate64 ioctl lseek pread64 "
        "pwrite64 read readv sendfile sendfile64 sync syncfs write writev",
    "flock": "flock",
    "fstypes": "sysfs",
    "fsync": "fdatasync fsync",
    "futex": "futex futex_time64 futex_waitv",
    "get_robust_list": "get_robust_list",
    "inotify": "inotify_add_watch inotify_init inotify_init1 inotify_rm_watch",
    "io_uring": "io_uring_enter io_uring_register io_uring_setup",
    "kcmp": "kcmp",
    "keys": "add_key keyctl request_key",
    "kill": "kill tgkill tkill",
    "landlock": "landlock_add_rule landlock_create_ruleset landlock_restrict_self",
    "lsm": "lsm_list_modules",
    "membarrier": "membarrier",
    "memfd": "memfd_create",
    "memory": "brk madvise mmap mmap2 mprotect mremap msync munmap remap_file_pages",
    "modify_ldt": "modify_ldt",
    "mount": "mount",
    "mount_setattr": "mount_setattr",
    "mqueue": "mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend "
        "mq_timedsend_time64 mq_unlink",
    "mseal": "mseal",
    "old_signals": "sgetmask sigaction signal sigpending sigprocmask sigsuspend ssetmask",
    "openat2": "openat2",
    "paths": "access chdir chown chown32 chroot creat faccessat faccessat2 fchdir fchown fchown32 "
        "fchownat getcwd lchown lchown32 link linkat mkdir mkdirat mknod mknodat open openat "
        "readlink readlinkat rename renameat renameat2 rmdir symlink symlinkat umask unlink "
        "unlinkat",
    "personality": "personality",
    "pidfd": "pidfd_getfd pidfd_open pidfd_send_signal",
    "pipes": "pipe pipe2",
    "pivot_root": "pivot_root",
    "poll": "_newselect poll ppoll ppoll_time64 pselect6 pselect6_time64 select",
    "posix_timers": "timer_create timer_delete timer_getoverrun timer_gettime timer_gettime64 "
        "timer_settime timer_settime64",
    "prctl": "prctl",
    "priority": "getpriority ioprio_get ioprio_set setpriority",
    "process": "arch_prctl execve exit exit_group getcpu getgroups getgroups32 getpgid getpgrp "
        "getpid getppid getrlimit getsid gettid prlimit64 rseq sched_yield set_robust_list "
        "set_tid_address setgroups setgroups32 setpgid setrlimit setsid sysinfo ugetrlimit",
    "process_vm": "process_vm_readv process_vm_writev",
    "procs": "clone clone3 fork vfork wait4 waitid waitpid",
    "ptrace": "ptrace",
    "readahead": "readahead",
    "reboot": "reboot",
    "residency": "mincore mlock mlock2 mlockall munlock munlockall",
    "rusage": "getrusage",
    "sched_attr": "sched_getattr sched_setattr",
    "sched_policy": "sched_get_priority_max sched_get_priority_min sched_getparam "
        "sched_getscheduler sched_setparam sched_setscheduler",
    "seccomp": "seccomp",
    "signalfd": "signalfd signalfd4",
    "signals": "alarm getitimer pause rt_sigaction rt_sigpending rt_sigprocmask rt_sigreturn "
        "rt_sigsuspend setitimer sigaltstack sigreturn",
    "sigwait": "rt_sigqueueinfo rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo",
    "socketcall": "socketcall",
    "sockets": "accept accept4 bind connect getpeername getsockname listen shutdown socket "
        "socketpair",
    "sockmmsg": "recvmmsg recvmmsg_time64 sendmmsg",
    "sockmsg": "recvfrom recvmsg sendmsg sendto",
    "sockopt": "getsockopt setsockopt",
    "splice": "splice tee",
    "stat": "fstat fstat64 fstatat64 futimesat lstat lstat64 newfstatat stat stat64 statx utime "
        "utimensat utimensat_time64 utimes",
    "statfs": "fstatfs fstatfs64 statfs statfs64",
    "sync_file_range": "sync_file_range",
    "syslog": "syslog",
    "sysv_ipc": "ipc",
    "sysv_msg": "msgctl msgget msgrcv msgsnd",
    "sysv_sem": "semctl semget semop semtimedop semtimedop_time64",
    "sysv_shm": "shmat shmctl shmdt shmget",
    "thread_area": "get_thread_area set_thread_area",
    "timecalls": "clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep "
        "clock_nanosleep_time64 getrandom gettimeofday nanosleep time",
    "timerfd": "timerfd_create timerfd_gettime timerfd_gettime64 timerfd_settime timerfd_settime64",
    "times": "times",
    "truncate": "truncate truncate64",
    "umount": "umount umount2",
    "userfaultfd": "userfaultfd",
    "ustat": "ustat",
    "utsname": "oldolduname olduname setdomainname sethostname uname",
    "vectored_at": "preadv preadv2 pwritev pwritev2",
    "vhangup": "vhangup",
    "vmsplice": "vmsplice",
    "xattr": "fgetxattr flistxattr fremovexattr fsetxattr getxattr lgetxattr listxattr llistxattr "
        "lremovexattr lsetxattr removexattr setxattr",
}

# name -> module (the bare module name within impls/)
HOMES: dict[str, str] = {name: module for module, names in _BY_MODULE.items() for name in names.split()}
MODULES: tuple[str, ...] = tuple(_BY_MODULE)
