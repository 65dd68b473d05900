"""Virtual time: derived from guest work and syscalls, never from the host.

Every run starts at the same fixed epoch. Time advances by a fixed cost per syscall and by
the time a guest asks to sleep, so the same run reads the same clock values every time.

The machine booted an hour before the run (BOOT_NS) and was idle until it: the CPU's idle
time (/proc/uptime's second figure) is that hour plus every jump of the clock made because no
task could run (the scheduler's `idle`).
"""
EPOCH_NS = 1_700_000_000 * 10**9         # 2023-11-14T22:13:20Z: a fixed, recognisable start
SYSCALL_COST_NS = 1_000                   # one microsecond per system call
NS = 10**9
BOOT_NS = 3600 * NS                       # CLOCK_MONOTONIC at the run's start


class VirtualClock:
    def __init__(self, epoch_ns: int = EPOCH_NS):
        self.epoch_ns = epoch_ns
        self.elapsed_ns = 0
        self.idle_ns = BOOT_NS

    def tick_syscall(self) -> None:
        self.elapsed_ns += SYSCALL_COST_NS

    def advance(self, ns: int) -> None:
        self.elapsed_ns += max(0, ns)

    def idle(self, ns: int) -> None:
        """Nothing can run until `ns` from now: the CPU idles that long."""
        self.advance(ns)
        self.idle_ns += max(0, ns)

    def realtime_ns(self) -> int:
        return self.epoch_ns + self.elapsed_ns

    def monotonic_ns(self) -> int:
        # CLOCK_MONOTONIC counts from "boot"; make boot one hour before the run starts.
        return BOOT_NS + self.elapsed_ns
