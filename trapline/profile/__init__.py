"""`trapline profile`: the sampling profiler's product side (issue 18, seed 004) — the run,
the tprof-style report, the files other tools open, the recorded trace."""
