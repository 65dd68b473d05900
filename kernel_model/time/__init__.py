"""Virtual time, never the host's: the guest's clocks, its timers and the tools' clocks.

  clock.py          the guest's virtual clock
  cpu_time.py       where the run's instructions went: per thread, and a clock for tools
  itimer.py         ITIMER_REAL (setitimer, alarm)
  timer.py          the profiling timer: an interrupt every N guest instructions
  timer_capture.py  the timer's tick taken at the interrupt, in C, for a sampling tool
  insn_alarms.py    a tool's callback when the instruction clock reaches a count

A package named `time` here does not shadow the standard library's: imports are absolute
(`import time` is the stdlib's, `kernel_model.time` is this one).
"""
