"""`trapline profile`: the sampling profiler's product side (issue 18, US 7,823,129) — the run,
the tprof-style report, the files other tools open, the recorded trace."""
