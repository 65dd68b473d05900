"""The modeled CPU: its descriptor tables, traps and saved state (Intel SDM Vol. 3A, chapters 3 and 6):

  gdt.py           the Global Descriptor Table, with Linux's selector layout
  idt.py           the Interrupt Descriptor Table's gates and the vector numbers
  trapframe.py     the hardware trap frame, in the order the CPU pushes it
  traps.py         trap dispatch through the IDT, with IRET semantics
  tsc.py           the time-stamp counter (RDTSC, RDTSCP) on the virtual clock
  cpus.py          the modeled CPUs (one, CPU 0)
"""
