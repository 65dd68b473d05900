"""The modeled CPUs, decided in one place: one CPU, CPU 0.

The sandbox runs one guest thread at a time, deterministically, so it models a machine with a
single online CPU. Everything that tells the guest how many CPUs there are reads this file:
/proc/cpuinfo (one "processor" entry, fs/proctext.py), sched_getaffinity (what glibc's
sysconf(_SC_NPROCESSORS_*) and busybox nproc fall back to or use) and sched_setaffinity.
"""

NR_CPUS = 1                       # nr_cpu_ids: CPUs 0 .. NR_CPUS-1 are possible and online

# The kernel's configured maximum (CONFIG_NR_CPUS), not how many there are: that of the
# x86-64 kernel the strace comparison runs on (tests/e2e/strace/compare.py), 256, without
# CONFIG_CPUMASK_OFFSTACK.
CONFIG_NR_CPUS = 256

# cpumask_size() of the modeled 64-bit kernel (include/linux/cpumask.h): the mask is a whole
# number of unsigned longs, BITS_TO_LONGS(large_cpumask_bits) * sizeof(long), where the bits are
# CONFIG_NR_CPUS when masks are not allocated off-stack (nr_cpu_ids only with OFFSTACK): 32
# bytes, what sched_getaffinity returns natively whatever the CPU count. The i386 compat entry
# points (kernel/compat.c) return the same size: it is the kernel's mask, not the caller's long.
CPUMASK_SIZE = 8 * ((CONFIG_NR_CPUS + 63) // 64)

ALL_CPUS = (1 << NR_CPUS) - 1     # the online mask, as an integer bit set
