"""vm.max_map_count, the sysctl (mm/mmap.c sysctl_max_map_count): one value for the system,
which every address space's mmap, munmap and split obey (vm.py AreaMap.max_map_count), shown
and set as /proc/sys/vm/max_map_count. Root may write it (kernel/sysctl.c vm_table: mode 0644,
proc_dointvec_minmax from 0): LTP's tests set it through their save_restore before they run."""
from ..fs.procsys import integer_value
from .vm import DEFAULT_MAX_MAP_COUNT


class MapCountSysctl:
    def __init__(self, kernel):
        self._kernel = kernel
        self.value = DEFAULT_MAX_MAP_COUNT
        kernel.fs.add_sysctl(b"vm/max_map_count", lambda: b"%d" % self.value, self.store)

    def store(self, data: bytes) -> None:
        self.value = integer_value(data)
        for proc in self._kernel.processes.values():
            if proc.space is not None:
                proc.space.vm.max_map_count = self.value

    def apply(self, space) -> None:
        """A new address space (exec, fork) obeys the value of now."""
        space.vm.max_map_count = self.value
