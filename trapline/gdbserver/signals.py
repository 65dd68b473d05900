"""GDB's signal numbers (gdb/gdbsupport signals.def: enum gdb_signal, what stop replies,
C/S actions and QPassSignals carry) and Linux x86's (what the guest and the kernel model
use). They agree up to 15 but not beyond: Linux's SIGUSR1 is 10, GDB's 30; SIGBUS 7 vs 10."""

# Linux x86 number -> GDB number (signals.def, the GDB_SIGNAL_* order)
_LINUX_TO_GDB = {
    1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 10, 8: 8, 9: 9, 10: 30, 11: 11, 12: 31, 13: 13,
    14: 14, 15: 15, 17: 20, 18: 19, 19: 17, 20: 18, 21: 21, 22: 22, 23: 16, 24: 24, 25: 25,
    26: 26, 27: 27, 28: 28, 29: 23, 30: 32, 31: 12,
}
_GDB_TO_LINUX = {g: l for l, g in _LINUX_TO_GDB.items()}
# GDB's real-time signals: GDB_SIGNAL_REALTIME_34 is 46, _33 is 45, then 35..63 from 47 on
_REALTIME_33 = 45


def gdb_signal(linux: int) -> int:
    if linux in _LINUX_TO_GDB:
        return _LINUX_TO_GDB[linux]
    if 33 <= linux <= 63:
        return _REALTIME_33 + (linux - 33)
    return 143                                   # GDB_SIGNAL_UNKNOWN


def linux_signal(gdb: int) -> int:
    """0 for a GDB number with no Linux x86 signal (the stub then delivers nothing)."""
    if gdb in _GDB_TO_LINUX:
        return _GDB_TO_LINUX[gdb]
    if _REALTIME_33 <= gdb < _REALTIME_33 + 31:
        return 33 + gdb - _REALTIME_33
    return 0
