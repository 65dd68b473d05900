"""strace (`trapline run --strace`, `trace --strace`): a tool outside the kernel.

client.py follows processes and decides when a line is printed; syscall_line.py formats one
syscall as strace 6.x does, with structs.py (structures), strings.py (quoted strings and
buffers) and errnos.py (`-1 ENOENT (No such file or directory)`).
Imported only when --strace asks for it (tests/unit/trapline/test_startup_imports.py).
"""
