"""The language's values: 64-bit integers (bpftrace's int64/uint64) and strings."""

MASK64 = (1 << 64) - 1


def wrap64(value: int) -> int:
    """`value` as a signed 64-bit integer: arithmetic wraps as it does in bpftrace's BPF code."""
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def truth(value) -> bool:
    """A condition's truth: a non-zero integer, a non-empty string (bpftrace compares a
    string condition against the empty string)."""
    return bool(value)
