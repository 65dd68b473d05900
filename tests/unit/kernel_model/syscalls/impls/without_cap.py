"""A call script's first call that drops capabilities from the effective set (capset, as a
root process running with `capsh --drop` or after cap_set_proc), for the tests of what a task
without it gets; its data goes at BUF+AT, past what the scripts use."""
import struct

VERSION_3 = 0x20080522
ALL_CAPS = (1 << 41) - 1
AT = 2900


def drop(caps: int | tuple, data: bytes = b"") -> tuple[tuple, bytes]:
    """(the capset call, the script's data with its header and sets at BUF+AT)."""
    effective = ALL_CAPS
    for cap in caps if isinstance(caps, tuple) else (caps,):
        effective &= ~(1 << cap)
    sets = struct.pack("<II", VERSION_3, 0) + struct.pack(
        "<6I", effective & 0xFFFFFFFF, ALL_CAPS & 0xFFFFFFFF, 0,
        effective >> 32, ALL_CAPS >> 32, 0)
    assert len(data) <= AT
    return ("capset", f"BUF+{AT}", f"BUF+{AT + 8}"), data.ljust(AT, b"\0") + sets
