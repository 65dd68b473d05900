"""Signals, one concept per file (Linux kernel/signal.c and arch/x86/kernel/signal.c):

  numbers.py   the signal numbers, their names (strace's spelling) and default actions
  delivery.py  posting, delivery to a handler or a default action, sigreturn (Signals)
  frame.py     the signal frames a handler runs on, byte for byte as Linux builds them
  fpframe.py   the x87/SSE state in a signal frame, as Linux writes and reads it
  sender.py    who sent a signal (si_pid, si_uid), as the receiver's namespaces see them

The numbers and names are re-exported here: `from kernel_model.signals import SIGSEGV`.
"""
from .numbers import *  # noqa: F401,F403
