"""The modeled CPU: its descriptor tables, traps and saved state (Intel SDM Vol. 3A, chapters 3 and 6):

  gdt.py           the Global Descriptor Table, with Linux's selector layout
  idt.py           the Interrupt Descriptor Table's gates and the vector numbers
  idt_handlers.py  the kernel's handler behind each gate
  trapframe.py     the hardware trap frame, in the order the CPU pushes it
  traps.py         trap dispatch through the IDT, with IRET semantics
  fpframe.py       the x87/SSE state in a signal frame, as Linux writes and reads it
  cpus.py          the modeled CPUs (one, CPU 0)
"""
