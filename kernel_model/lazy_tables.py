"""The kernel's tables a run makes when first used: a static hello binds no socket, maps no
file shared, holds no key and asks no UTS name, and their modules' classes (dataclasses made at
import) were a measurable share of its start (bench/startup.py)."""
import functools


class LazyTables:
    @functools.cached_property
    def uts(self):
        """The run's UTS namespace (sethostname, uname)."""
        from .syscalls.impls.utsname import UtsName
        return UtsName()

    @functools.cached_property
    def unix_names(self):
        """The names AF_UNIX sockets are bound to (kernel_model/net)."""
        from .net.names import UnixNames
        return UnixNames()

    @functools.cached_property
    def console_levels(self):
        """The console's log levels (syslog, /proc/sys/kernel/printk: printk.py)."""
        from .printk import ConsoleLevels
        return ConsoleLevels()

    @functools.cached_property
    def netlink_ports(self):
        """The netlink sockets' port ids and lo's state (net/netlink_ports.py)."""
        from .net.netlink_ports import NetlinkPorts
        return NetlinkPorts()

    @functools.cached_property
    def ns_inums(self):
        """fs/proc/generic.c proc_alloc_inum: the inode numbers of the namespaces the run makes,
        one sequence for every kind, from the first dynamic one (0xF0000000)."""
        from itertools import count
        return count(0xF0000000)

    @functools.cached_property
    def initial_net(self):
        """The machine's network namespace: the kernel's own tables (net/namespace.py)."""
        from .net.namespace import initial
        from .user_namespace import INITIAL
        return initial(self, INITIAL)

    @functools.cached_property
    def time_namespaces(self):
        """The numbers of the time namespaces unshare makes (time_namespace.py)."""
        from .time_namespace import TimeNamespaces
        return TimeNamespaces(self.ns_inums)

    @functools.cached_property
    def keys(self):
        """add_key, request_key, keyctl (keys/)."""
        from .keys.table import KeyTable
        return KeyTable()

    @functools.cached_property
    def page_cache(self):
        """Files' MAP_SHARED pages (memory/page_cache.py)."""
        from .memory.page_cache import PageCache
        return PageCache()

    @functools.cached_property
    def aio_limits(self):
        """fs.aio-nr and fs.aio-max-nr, every AIO context's requests (aio/table.py)."""
        from .aio.table import AioLimits
        return AioLimits()

    @functools.cached_property
    def hugepages(self):
        """The huge page pool, vm.nr_hugepages (memory/hugetlb.py)."""
        from .memory.hugetlb import HugePool
        return HugePool()
