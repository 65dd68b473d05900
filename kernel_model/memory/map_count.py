"""vm.max_map_count, the sysctl (mm/mmap.c sysctl_max_map_count): one value for the system,
which every address space's mmap, munmap and split obey (vm.py AreaMap.max_map_count), shown
and set as /proc/sys/vm/max_map_count. Root may write it (kernel/sysctl.c vm_table: mode 0644,
proc_dointvec_minmax from 0): LTP's tests set it through their save_restore before they run."""
from .. import errno as E
from ..errno import GuestErrno
from ..fs.sysctl_write import int_writer
from .vm import DEFAULT_MAX_MAP_COUNT

INT_MAX = (1 << 31) - 1


class MapCountSysctl:
    def __init__(self, kernel):
        self._kernel = kernel
        self.value = DEFAULT_MAX_MAP_COUNT
        kernel.fs.add_sysctl(b"vm/max_map_count", lambda: b"%d" % self.value,
                             int_writer(self.store, _zero_to_int_max))

    def store(self, value: int) -> None:
        self.value = value
        for proc in self._kernel.processes.values():
            if proc.space is not None:
                proc.space.vm.max_map_count = self.value

    def apply(self, space) -> None:
        """A new address space (exec, fork) obeys the value of now."""
        space.vm.max_map_count = self.value


def _zero_to_int_max(value: int) -> int:
    """proc_dointvec_minmax with extra1 = SYSCTL_ZERO: a negative value or one past an int is
    EINVAL and the old value stays."""
    if not 0 <= value <= INT_MAX:
        raise GuestErrno(E.EINVAL)
    return value
