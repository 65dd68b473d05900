"""Processes and threads, from birth to reaping, and who runs next:

  proc.py   processes and threads (the kernel's `struct proc`)
  fork.py   fork, vfork and clone: new processes and threads
  exec.py   execve: a program image built in a fresh address space, then committed
  binprm.py the program execve loads: the file read and checked, `#!` scripts
  spawn.py  the run's first process: fds from the config, starting directory, program
  exit.py   exit and reaping
  job_control.py  a child's stops and continues, reported to its parent's wait
  task_flags.py   what prctl sets on a task, through fork and exec
  sched.py  the scheduler: the next thread, sleep/wakeup, timeouts, deadlock
"""
