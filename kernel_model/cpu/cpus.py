"""The modeled CPUs, decided in one place: one CPU, CPU 0.

The sandbox runs one guest thread at a time, deterministically, so it models a machine with a
single online CPU. Everything that tells the guest how many CPUs there are reads this file:
/proc/cpuinfo (one "processor" entry, fs/proctext.py), sched_getaffinity (what glibc's
sysconf(_SC_NPROCESSORS_*) and busybox nproc fall back to or use) and sched_setaffinity.
"""

NR_CPUS = 1                       # nr_cpu_ids: CPUs 0 .. NR_CPUS-1 are possible and online

# cpumask_size() of the modeled 64-bit kernel (include/linux/cpumask.h): the mask is a whole
# number of unsigned longs, BITS_TO_LONGS(nr_cpu_ids) * sizeof(long). The i386 compat entry
# points (kernel/compat.c) return the same size: it is the kernel's mask, not the caller's long.
CPUMASK_SIZE = 8 * ((NR_CPUS + 63) // 64)

ALL_CPUS = (1 << NR_CPUS) - 1     # the online mask, as an integer bit set
