"""The vDSO's data pages (vvar): what the kernel tells the vDSO's clocks.

Linux keeps struct vdso_data there (include/vdso/datapage.h): per clock, a base time and the
TSC value it was taken at, updated at every timer tick (update_vsyscall). Here the time-stamp
counter itself runs on the virtual clock (kernel_model/cpu/tsc.py: RDTSC gives CLOCK_MONOTONIC in
nanoseconds), so each clock is the counter plus a constant: the page holds, for each clock id
below SERVED_CLOCKS, that offset as a little-endian u64, or NOT_SERVED (all ones) for a clock the
vDSO leaves to the system call (as Linux's vDSO does for the CPU-time and alarm clocks). The
offsets change only if CLOCK_REALTIME is set, which the sandbox does not allow, so the page is
written once, when exec maps it, and a read gives what the syscall would read at that
instruction (without the syscall's own microsecond, kernel_model/time/clock.py).

The vvar area's size and names are those of the host the strace comparison runs on (Linux
6.18: [vvar] 4 pages, then [vvar_vclock] 2 pages, then [vdso]), so that the mmaps placed below
them land where native ones do; the offsets are in the first page.
"""
import struct

from kernel_model.memory.layout import PAGE

SERVED_CLOCKS = 16                       # clock ids 0..15 have a slot
NOT_SERVED = (1 << 64) - 1
VVAR_PAGES = 4                           # [vvar]
VCLOCK_PAGES = 2                         # [vvar_vclock]
VVAR_DISTANCE = (VVAR_PAGES + VCLOCK_PAGES) * PAGE   # from the first vvar page to the vDSO

# lib/vdso/gettimeofday.c: the high-resolution clocks (REALTIME, MONOTONIC, BOOTTIME, TAI), the
# coarse ones and MONOTONIC_RAW; kernel_model/syscalls/impls/timecalls.py clock_ns reads them
# as CLOCK_REALTIME or CLOCK_MONOTONIC.
REALTIME_LIKE = (0, 5, 11)               # REALTIME, REALTIME_COARSE, TAI
MONOTONIC_LIKE = (1, 4, 6, 7)            # MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME


def clock_offsets(clock) -> list[int]:
    """Each clock's value minus the counter's (CLOCK_MONOTONIC), for the VirtualClock `clock`."""
    realtime = clock.realtime_ns() - clock.monotonic_ns()
    offsets = [NOT_SERVED] * SERVED_CLOCKS
    for clock_id in REALTIME_LIKE:
        offsets[clock_id] = realtime
    for clock_id in MONOTONIC_LIKE:
        offsets[clock_id] = 0
    return offsets


def serve_time_namespace(space, initial: bool) -> None:
    """A process of a time namespace other than the first (time_namespace.py) reads the
    monotonic clocks with their offsets: its vvar page leaves them to the system call, which
    adds them, where Linux maps a namespace's own data page (VDSO_CLOCKMODE_TIMENS:
    kernel/time/namespace.c timens_setup_vdso_data). Written by the kernel, not the process."""
    vdso = getattr(space, "vdso", None)
    if vdso is None:
        return
    start = vdso.base - VVAR_DISTANCE
    value = 0 if initial else NOT_SERVED
    for clock_id in MONOTONIC_LIKE:
        space.machine.mem.write(start + 8 * clock_id, struct.pack("<Q", value))


def serve_vdso(proc) -> None:
    """The vDSO's clocks as `proc`'s time namespace shows them (exec, fork into a new
    namespace, setns)."""
    from kernel_model.time_namespace import INITIAL
    serve_time_namespace(proc.space, proc.time_ns is INITIAL)


def vvar_page(clock) -> bytes:
    """The first vvar page's bytes (the rest of the area is zero)."""
    table = struct.pack(f"<{SERVED_CLOCKS}Q", *clock_offsets(clock))
    return table + bytes(PAGE - len(table))

