"""The vDSO: the shared object Linux maps into every process (arch/x86/entry/vdso/).

  source.py     its functions, in assembly (clocks, getcpu; i386's system call entry and
                signal trampolines)
  assemble.py   source.py -> code.py with keystone (`python3 -m kernel_model.vdso.assemble`)
  code.py       the functions' machine code and CFA rows (generated)
  cfa_rows.py   where each function's CFA moves (read from its code when assembling)
  eh_frame.py   .eh_frame and .eh_frame_hdr: unwind tables, the i386 signal trampolines' too
  elf_image.py  the ELF image around it: dynamic symbols with their LINUX_2.x versions
  vvar.py       the data page its clocks read
  mapping.py    exec maps both and tells the program where (AT_SYSINFO_EHDR, AT_SYSINFO)
"""
