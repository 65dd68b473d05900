"""The emulate strategy (US 7,350,196), one concept per file:

  strategy.py       EmulateProbes: the int3 or LOCK patch and its trap
  insn.py           one instruction executed on a trap frame
  return_sites.py   where return probes go
  kernel.py         same-privilege traps: the frame moved on the live stack
  kernel_probes.py  KernelEmulateProbes, for kernel code
"""
