"""The relocate strategy (US 6,957,421), one concept per file:

  strategy.py  RelocateProbes: the int3 at a function's entry, the traps of its copy
  blocks.py    the function's code: its instructions, blocks and landings
  copy.py      the instrumented copy's layout
  returns.py   original-space return pointers
  signals.py   the original address a signal frame shows for a PC in a copy
  syscalls.py  system calls in a copy
  table.py     the relocation table, both ways
"""
