"""Children of traced processes (seed 002): the monitor, the policies, the backpatch engine."""
