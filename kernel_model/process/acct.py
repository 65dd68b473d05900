"""BSD process accounting (kernel/acct.c): once acct(2) names a file, every process that ends
appends a struct acct_v3 record to it (CONFIG_BSD_PROCESS_ACCT_V3, include/uapi/linux/acct.h),
until acct(NULL).

The record (acct_collect, fill_ac): AFORK when the process never exec'd since its fork,
AXSIG when a signal killed it, ACORE when it dumped core (the model writes no core, so only
the status's bit says so); version 3, no controlling terminal; the wait status word as
ac_exitcode; the real uid and gid; pid and parent pid; its start in seconds since the epoch
(ac_btime) and its run time in AHZ (100 Hz) ticks as a float (ac_etime); its user and system
times in ticks and its address space's size in KiB as comp_t; no I/O, faults or swaps counted;
the command name (comm). Linux suspends accounting when the file system fills (acct_on's
free-space thresholds); the model's overlay does not run out that way.
"""
import struct

from ..errno import GuestErrno

AFORK, ASU, ACORE, AXSIG = 0x01, 0x02, 0x08, 0x10
ACCT_VERSION = 3
AHZ = 100
NS_PER_TICK = 10**9 // AHZ
ACCT_V3 = struct.Struct("<BBHIIIIIIIHHHHHHHH16s")        # 64 bytes


def encode_comp_t(value: int) -> int:
    """encode_comp_t: 13 bits of mantissa, a base-8 exponent in 3, rounded at the last shift."""
    exp = rnd = 0
    while value > 0x1FFF:
        rnd = value & 4
        value >>= 3
        exp += 1
    if rnd:
        value += 1
        if value > 0x1FFF:
            value >>= 3
            exp += 1
    if exp > 7:
        return 0xFFFF
    return exp << 13 | value


def encode_float(value: int) -> int:
    """encode_float: an IEEE 754 single's bits, the mantissa truncated (not rounded)."""
    if value == 0:
        return 0
    top = value.bit_length() - 1
    mantissa = value << (23 - top) if top <= 23 else value >> (top - 23)
    return (top + 127) << 23 | mantissa & 0x7FFFFF


class Accounting:
    """The accounting file: an open file description acct(2) opened, written on each exit."""

    def __init__(self, file):
        self.file = file

    def record(self, proc, status: int, clock) -> bytes:
        run_ns = clock.monotonic_ns() - proc.start_ns
        flags = (0 if proc.did_exec else AFORK) | (AXSIG if status & 0x7F else 0) | \
            (ACORE if status & 0x80 else 0)
        leader = proc.threads[0] if proc.threads else None
        # a task's comm is its program's name until prctl(PR_SET_NAME) sets one (prctl.py)
        comm = (leader.comm if leader is not None and leader.comm else
                proc.exe.rsplit(b"/", 1)[-1])[:15]
        size_kib = proc.space.vm.mapped_bytes() // 1024 if proc.space is not None else 0
        return ACCT_V3.pack(
            flags, ACCT_VERSION, 0, status, proc.creds.uid, proc.creds.gid, proc.pid, proc.ppid,
            (clock.realtime_ns() - run_ns) // 10**9, encode_float(run_ns // NS_PER_TICK),
            encode_comp_t(proc.utime_ns // NS_PER_TICK), encode_comp_t(proc.stime_ns // NS_PER_TICK),
            encode_comp_t(size_kib), 0, 0, 0, 0, 0, comm)

    def process_exited(self, proc, status: int, clock) -> None:
        """acct_process: the record appended (O_APPEND), whoever opened the file; a write that
        fails is dropped (do_acct_process ignores __kernel_write's result)."""
        try:
            self.file.write(self.record(proc, status, clock))
        except GuestErrno:
            pass

    def close(self) -> None:
        self.file.close()
