"""Guest address spaces:

  layout.py      where things live in a guest address space, per architecture
  vm.py          the page mapper: a process's areas on top of the Machine's memory
  space.py       one guest address space (Space): Machine, areas, GDT, IDT, trap dispatcher
  space_pool.py  released Machines, kept for the code they translated
"""
