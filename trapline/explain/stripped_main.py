"""`main` of a stripped program, for `explain -p uprobe:PROG:main`: Debian strips its programs
(/bin/ls has neither .symtab nor a dynamic `main`), yet `main` is where a student looks first.

glibc's `_start` passes main to `__libc_start_main` as its first argument; the walk-up already
finds it there as gdb and radare2 do (instrumenter/profiler/start_code.py, main_of), and so does
explain. It asks at attach, before ld.so has run, and wants main as the file's own address
(a probe's 0xADDR is moved by the load bias when the object is placed, session.resolve_in):
  x86-64: `lea rdi, [rip + main]` gives the address where the program is mapped: less the bias;
  i386 PIE: `push dword ptr [ebx + main@GOT]` reads a GOT slot ld.so has not relocated yet,
    which holds main's link-time address (R_386_RELATIVE adds the bias later: glibc's
    elf/dynamic-link.h), already the file's address; a `push $main` (not PIE) is the same
    either way. A value below the bias cannot be a mapped address of the program: it is taken
    as the file's.
"""
from __future__ import annotations

from instrumenter.profiler.start_code import main_of


def has_main(process) -> bool:
    image = getattr(process, "image", None)
    return image is not None and image.symbols.lookup("main") is not None


def main_in_file(door, process) -> int | None:
    """main's address as the program's ELF file has it, or None (no glibc start code)."""
    image = getattr(process, "image", None)
    found = main_of(door, process)
    if image is None or found is None:
        return None
    bias = image.load_bias
    return found - bias if found >= bias else found


def sentence(program: str, arch: str) -> str:
    start = "sysdeps/x86_64/start.S: lea rdi, [rip + main]" if arch == "x86_64" else \
        "sysdeps/i386/start.S: push main, the last argument pushed"
    return (f"{program} is stripped (no symbol main): main is the function its _start passes "
            f"to __libc_start_main as the first argument (glibc's {start}), found as the "
            "walk-up finds it (instrumenter/profiler/start_code.py)")
