"""The time-stamp counter, virtual like every clock (docs/ARCHITECTURE.md: no host time in a run).

Unicorn's RDTSC and RDTSCP read the host's clock, and glibc's ld.so executes RDTSC at start-up
(HP_TIMING), so a run would carry host time. The kernel sets CR4.TSD ("time stamp disable",
Intel SDM Vol. 3A 2.5: RDTSC/RDTSCP at CPL > 0 raise #GP), as Linux does for a task with
prctl(PR_SET_TSC, PR_TSC_SIGSEGV), and its #GP handler emulates the two instructions from the
virtual clock: the counter runs at 1 GHz (the 1000 MHz /proc/cpuinfo reports) on CLOCK_MONOTONIC,
and every read advances the clock by one tick of TSC_READ_NS so that two reads differ, as on a
real CPU. Any other #GP is the program's: SIGSEGV.
"""
from emu.memory import MemoryAccessError

CR4_TSD = 1 << 2
RDTSC = b"\x0f\x31"
RDTSCP = b"\x0f\x01\xf9"
TSC_READ_NS = 10                 # what one read costs on the virtual clock
TSC_AUX = 0                      # IA32_TSC_AUX: Linux puts the CPU number there; one CPU


def disable_user_time_stamps(machine) -> None:
    """Set CR4.TSD in a new address space's CPU (its saved contexts carry it from then on)."""
    machine.set_reg("cr4", machine.reg("cr4") | CR4_TSD)


def emulate_time_stamp(machine, clock_of, frame) -> bool:
    """If the #GP at frame.ip is RDTSC or RDTSCP, do what it does on the virtual clock
    (`clock_of()` gives it) and step over it; False for any other #GP."""
    try:
        code = machine.mem.read(frame.ip, 3)
    except MemoryAccessError:    # an unreadable IP holds no RDTSC: the program's own #GP
        return False
    if code.startswith(RDTSC):
        length = len(RDTSC)
    elif code == RDTSCP:
        length = len(RDTSCP)
        machine.set_reg("rcx" if machine.arch.bits == 64 else "ecx", TSC_AUX)
    else:
        return False
    clock = clock_of()
    clock.advance(TSC_READ_NS)
    ticks = clock.monotonic_ns()            # 1 GHz: one tick per virtual nanosecond
    wide = machine.arch.bits == 64          # the upper halves of rax/rdx are cleared
    machine.set_reg("rax" if wide else "eax", ticks & 0xFFFFFFFF)
    machine.set_reg("rdx" if wide else "edx", ticks >> 32 & 0xFFFFFFFF)
    frame.ip += length
    return True
