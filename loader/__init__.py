"""ELF executable -> LoadedImage (segments, entry, symbols) and the initial process stack.

Emulator-agnostic: the kernel model maps what this package describes. Modules: image (the
data types), elf (load_elf, load_elf_file, detect_arch), elf_structs (pyelftools' header and
program header structures), elf_symbols (symbols, read on first use), program_headers (the
validation rules), symbols (SymbolTable), stack (build_initial_stack), auxv (AT_* constants).
Nothing is re-exported here, and pyelftools is imported only when a file is first read.
"""
