"""Children of traced processes (US 7,185,320): the monitor, the policies, the backpatch engine."""
