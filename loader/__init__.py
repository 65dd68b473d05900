"""ELF executable -> LoadedImage (segments, entry, symbols) and the initial process stack.

Emulator-agnostic: the kernel model maps what this package describes. Modules: image (the
data types), elf (load_elf, load_elf_file, detect_arch), program_headers (the validation rules),
symbols (SymbolTable), stack (build_initial_stack), auxv (AT_* constants). Nothing is re-exported
here so that importing loader.image or loader.errors does not pull in lief.
"""
