"""Virtual time: derived from guest work and syscalls, never from the host.

Every run starts at the same fixed epoch. Time advances by a fixed cost per syscall and by
the time a guest asks to sleep, so the same run reads the same clock values every time.
"""
EPOCH_NS = 1_700_000_000 * 10**9         # 2023-11-14T22:13:20Z: a fixed, recognisable start
SYSCALL_COST_NS = 1_000                   # one microsecond per system call
NS = 10**9


class VirtualClock:
    def __init__(self, epoch_ns: int = EPOCH_NS):
        self.epoch_ns = epoch_ns
        self.elapsed_ns = 0

    def tick_syscall(self) -> None:
        self.elapsed_ns += SYSCALL_COST_NS

    def advance(self, ns: int) -> None:
        self.elapsed_ns += max(0, ns)

    def realtime_ns(self) -> int:
        return self.epoch_ns + self.elapsed_ns

    def monotonic_ns(self) -> int:
        # CLOCK_MONOTONIC counts from "boot"; make boot one hour before the run starts.
        return 3600 * NS + self.elapsed_ns
