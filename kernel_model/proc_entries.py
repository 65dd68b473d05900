"""The kernel's own /proc entries: what the UTS namespace, the kernel's build and the key
quotas show there (kernel/utsname_sysctl.c, init/version.c, kernel/configs.c,
security/keys/proc.c). Registered when the kernel is made; each module behind an entry is
imported when the entry is first read or written: a static hello reads none of them, and their
classes were a measurable share of its start (bench/startup.py)."""


def register_proc_entries(kernel) -> None:
    fs = kernel.fs
    for path in (b"kernel/hostname", b"kernel/domainname"):
        fs.add_sysctl(path, *_uts_entry(kernel, path))
    fs.add_sysctl(b"kernel/osrelease", lambda: _utsname().UTS_RELEASE)
    fs.add_sysctl(b"kernel/version", lambda: _utsname().UTS_VERSION)
    fs.add_proc_file(b"config.gz", lambda: _kconfig().config_gz())     # CONFIG_IKCONFIG_PROC
    fs.add_proc_file(b"version", lambda: _utsname().PROC_VERSION)
    fs.add_proc_file(b"key-users", lambda: _key_users_text(kernel.keys))
    _register_hugepages(kernel)
    # fs/aio.c aio_sysctls: the requests of every AIO context, and their limit
    fs.add_sysctl(b"fs/aio-nr", lambda: b"%d" % kernel.aio_limits.aio_nr)
    fs.add_sysctl(b"fs/aio-max-nr", lambda: b"%d" % kernel.aio_limits.aio_max_nr)


def _register_hugepages(kernel) -> None:
    """vm.nr_hugepages (the pool, mm/hugetlb.c hugetlb_sysctl_handler), /proc/meminfo's huge
    page lines, and the two write-only actions LTP's hugepage set-up writes first
    (vm.drop_caches: 1 to 4, vm.compact_memory: 1; proc_dointvec_minmax, else EINVAL): the
    model keeps no clean cache to drop and its memory is never fragmented, so they do
    nothing else."""
    fs = kernel.fs
    from .fs.proctext import MEMINFO
    from .fs.sysctl_write import int_writer
    fs.add_sysctl(b"vm/nr_hugepages", lambda: b"%d" % kernel.hugepages.total,
                  int_writer(lambda value: kernel.hugepages.set_total(value), _unsigned))
    fs.add_sysctl(b"vm/drop_caches", lambda: b"", int_writer(lambda value: None, _range(1, 4)),
                  mode=0o200)
    fs.add_sysctl(b"vm/compact_memory", lambda: b"", int_writer(lambda value: None, _range(1, 1)),
                  mode=0o200)
    fs.add_proc_file(b"meminfo", lambda: MEMINFO + kernel.hugepages.meminfo())


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
    """kernel.hostname or kernel.domainname: read and written through the run's UTS namespace
    (kernel.uts, made on first use), as its own sysctls() say."""
    def text() -> bytes:
        return kernel.uts.sysctls()[path][0]()

    def write(position: int, data: bytes) -> int:
        return kernel.uts.sysctls()[path][1](position, data)
    return text, write


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
