"""The kernel's own /proc entries: what the UTS namespace, the kernel's build, the console's
log levels, the key quotas and the machine's figures show there (kernel/utsname_sysctl.c,
init/version.c, kernel/configs.c, kernel/printk/sysctl.c, security/keys/proc.c,
fs/proc/{loadavg,meminfo}.c: machine_stats.py; /proc/uptime depends on the reader's time
namespace: fs/procfs.py). Registered when the kernel is made; each module behind an entry is
imported when the entry is first read or written: a static hello reads none of them, and their
classes were a measurable share of its start (bench/startup.py)."""


def register_proc_entries(kernel) -> None:
    fs = kernel.fs
    for path in (b"kernel/hostname", b"kernel/domainname"):
        fs.add_sysctl(path, *_uts_entry(kernel, path))
    fs.add_sysctl(b"kernel/osrelease", lambda: _utsname().UTS_RELEASE)
    fs.add_sysctl(b"kernel/version", lambda: _utsname().UTS_VERSION)
    fs.add_sysctl(b"kernel/printk", lambda: kernel.console_levels.text(),
                  lambda position, data: kernel.console_levels.write(position, data))
    fs.add_proc_file(b"config.gz", lambda: _kconfig().config_gz())     # CONFIG_IKCONFIG_PROC
    fs.add_proc_file(b"version", lambda: _utsname().PROC_VERSION)
    fs.add_proc_file(b"key-users", lambda: _key_users_text(kernel.keys))
    fs.add_sysctl(b"kernel/ns_last_pid", *_last_pid_entry(kernel))
    for scope in (b"all", b"default", b"lo"):
        fs.add_sysctl(b"net/ipv4/conf/%s/tag" % scope, *_conf_tag_entry(kernel, scope))
    for name in ("maxkeys", "maxbytes", "root_maxkeys", "root_maxbytes"):
        fs.add_sysctl(b"kernel/keys/" + name.encode(), *_key_quota_entry(kernel, name))
    for name in ("loadavg", "meminfo"):
        fs.add_proc_file(name.encode(), lambda name=name: getattr(_stats(), name + "_text")(kernel))
    _register_hugepages(kernel)
    # fs/aio.c aio_sysctls: the requests of every AIO context, and their limit
    fs.add_sysctl(b"fs/aio-nr", lambda: b"%d" % kernel.aio_limits.aio_nr)
    fs.add_sysctl(b"fs/aio-max-nr", lambda: b"%d" % kernel.aio_limits.aio_max_nr)


def _register_hugepages(kernel) -> None:
    """vm.nr_hugepages (the pool, mm/hugetlb.c hugetlb_sysctl_handler; /proc/meminfo's huge
    page lines are the pool's: machine_stats.py), and the two write-only actions LTP's hugepage set-up writes first
    (vm.drop_caches: 1 to 4, vm.compact_memory: 1; proc_dointvec_minmax, else EINVAL): the
    model keeps no clean cache to drop and its memory is never fragmented, so they do
    nothing else."""
    fs = kernel.fs
    from .fs.sysctl_write import int_writer
    fs.add_sysctl(b"vm/nr_hugepages", lambda: b"%d" % kernel.hugepages.total,
                  int_writer(lambda value: kernel.hugepages.set_total(value), _unsigned))
    fs.add_sysctl(b"vm/drop_caches", lambda: b"", int_writer(lambda value: None, _range(1, 4)),
                  mode=0o200)
    fs.add_sysctl(b"vm/compact_memory", lambda: b"", int_writer(lambda value: None, _range(1, 1)),
                  mode=0o200)


def _unsigned(value: int) -> int:
    if not 0 <= value < 1 << 64:
        raise _einval()
    return value


def _range(lo: int, hi: int):
    def check(value: int) -> int:
        if not lo <= value <= hi:
            raise _einval()
        return value
    return check


def _einval():
    from .errno import GuestErrno, EINVAL
    return GuestErrno(EINVAL)


def _uts_entry(kernel, path: bytes):
    """kernel.hostname or kernel.domainname: read and written through the UTS namespace of
    the task that reads or writes (kernel/utsname_sysctl.c get_uts: current's; the run's
    first is kernel.uts, made on first use), as its own sysctls() say."""
    def uts():
        current = kernel.current
        return (current.process.uts_ns if current is not None else None) or kernel.uts

    def text() -> bytes:
        return uts().sysctls()[path][0]()

    def write(position: int, data: bytes) -> int:
        return uts().sysctls()[path][1](position, data)
    return text, write


def _last_pid_entry(kernel):
    """kernel/pid_namespace.c pid_ns_ctl_handler (CONFIG_CHECKPOINT_RESTORE): the last pid
    handed out in the reader's pid namespace; writing it (0..pid_max, root's
    CAP_CHECKPOINT_RESTORE) makes the next process's pid there the first free one after it
    (Kernel.peek_next_pid in the initial namespace, pid_namespace.py's next_free below)."""
    def namespace():
        thread = kernel.current
        return thread.process.pid_ns if thread is not None else None

    def put(value: int) -> None:
        ns = namespace()
        if ns is None or ns.initial:
            kernel.next_pid = value + 1
        else:
            ns.last_pid = value

    def text() -> bytes:
        ns = namespace()
        return b"%d" % (kernel.next_pid - 1 if ns is None or ns.initial else ns.last_pid)

    def write(position: int, data: bytes) -> int:       # procsys.py waits for the /proc mount
        from .fs.procsys import PID_MAX
        from .fs.sysctl_write import int_in, int_writer
        return int_writer(put, int_in(0, PID_MAX))(position, data)
    return text, write


def _conf_tag_entry(kernel, scope: bytes):
    """net.ipv4.conf.SCOPE.tag (net/ipv4/devinet.c devinet_conf_proc, proc_dointvec): the
    reader's network namespace's (net/namespace.py), any int."""
    def net():
        thread = kernel.current
        return getattr(thread.process, "net_ns", None) if thread is not None else None

    def put(value: int) -> None:
        (net() or kernel.initial_net).conf_tag[scope] = value

    def write(position: int, data: bytes) -> int:
        from .fs.sysctl_write import int_in, int_writer
        return int_writer(put, int_in(-(1 << 31), (1 << 31) - 1))(position, data)
    return (lambda: b"%d" % (net() or kernel.initial_net).conf_tag[scope]), write


def _key_quota_entry(kernel, name: str):
    """security/keys/sysctl.c: proc_dointvec_minmax from 1 (SYSCTL_ONE) to INT_MAX."""
    from .fs.sysctl_write import int_in, int_writer

    def put(value: int) -> None:
        kernel.keys.quota_limits[name] = value
    return (lambda: b"%d" % kernel.keys.quota_limits[name]), int_writer(put, int_in(1, (1 << 31) - 1))


def _utsname():
    """syscalls/impls/utsname.py (the UTS names and their dataclass)."""
    from .syscalls.impls import utsname
    return utsname


def _kconfig():
    """kconfig.py (and gzip), for /proc/config.gz."""
    from . import kconfig
    return kconfig


def _key_users_text(table) -> bytes:
    from .keys.quota import key_users_text
    return key_users_text(table)


def _stats():
    from . import machine_stats
    return machine_stats
