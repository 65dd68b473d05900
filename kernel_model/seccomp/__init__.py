"""Secure computing (Linux kernel/seccomp.c), one concept per file:

  cbpf.py      classic BPF: the checks a filter passes when it is loaded (net/core/filter.c
               bpf_check_classic, kernel/seccomp.c seccomp_check_filter) and its interpreter
  data.py      struct seccomp_data, what a filter reads about a call
  install.py   seccomp(2)'s and prctl(PR_SET_SECCOMP)'s modes and filters on a task
  enforce.py   what each call of a task in seccomp mode meets: strict mode's four calls, the
               filters' verdict (KILL, TRAP with SIGSYS, ERRNO, TRACE, LOG, ALLOW)

A task's mode and filters are in its TaskFlags (process/task_flags.py): fork, clone and exec
keep them, as copy_seccomp and execve do.
"""
