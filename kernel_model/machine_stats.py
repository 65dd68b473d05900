"""The machine's figures that sysinfo(2) and /proc/uptime (fs/procfs.py: in the reader's time
namespace), /proc/loadavg and /proc/meminfo show, from one source each (kernel/sys.c do_sysinfo, fs/proc/uptime.c, fs/proc/loadavg.c,
fs/proc/meminfo.c), so that a program comparing them (LTP sysinfo01) finds them equal.

- Time since boot: CLOCK_BOOTTIME, which is the monotonic clock (nothing suspends); idle time
  the clock's (time/clock.py: the hour before the run and every wait for a deadline).
- Memory: the run's budget (--memory) is the RAM; what the live address spaces map and the
  overlay's file bytes (tmpfs-like: shmem, in the page cache) are in use, the rest is free.
  There is no swap; the huge pages are the pool's (memory/hugetlb.py).
- Load averages are 0: calc_global_load samples the run queue every LOAD_FREQ (5 s and a tick)
  into exponential averages; the model takes no samples, so they are those of a machine
  that has just booted idle. The run queue and the task count are the scheduler's.
"""
from .process.proc import RUNNABLE, ZOMBIE

NS = 10**9
KIB = 1024


def uptime_ns(kernel) -> int:
    return kernel.clock.monotonic_ns()


def memory(kernel) -> tuple[int, int, int]:
    """(total, free, file bytes) of the machine's RAM."""
    spaces = {p.space.serial: p.space for p in kernel.processes.values()
              if p.state != ZOMBIE and p.space is not None}
    mapped = sum(space.vm.mapped_bytes() for space in spaces.values())
    files = kernel.fs.data_budget.used
    total = kernel.config.memory_limit
    return total, max(0, total - mapped - files), files


def task_count(kernel) -> int:
    """nr_threads: every task not yet released (a zombie process until it is reaped)."""
    return sum(max(1, len(p.live_threads())) for p in kernel.processes.values())


def running_count(kernel) -> int:
    """nr_running(): the runnable tasks (the reader is one of them)."""
    return max(1, sum(1 for p in kernel.processes.values() for t in p.threads
                      if t.state == RUNNABLE))


def loadavg_text(kernel) -> bytes:
    """fs/proc/loadavg.c: three averages, running/tasks, the last pid handed out."""
    return b"0.00 0.00 0.00 %d/%d %d\n" % (running_count(kernel), task_count(kernel),
                                           kernel.next_pid - 1)


def meminfo_text(kernel) -> bytes:
    """fs/proc/meminfo.c's first lines and the huge page counts (hugetlb_report_meminfo)."""
    total, free, files = memory(kernel)
    sizes = [(b"MemTotal", total), (b"MemFree", free), (b"MemAvailable", free),
             (b"Buffers", 0), (b"Cached", files), (b"SwapCached", 0), (b"SwapTotal", 0),
             (b"SwapFree", 0), (b"Shmem", files)]
    lines = [b"%-16s%8d kB\n" % (name + b":", size // KIB) for name, size in sizes]
    return b"".join(lines) + kernel.hugepages.meminfo()
