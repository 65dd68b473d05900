"""A process's auxiliary vector, as /proc/PID/auxv gives it to a debugger (GDB reads it with
qXfer:auxv:read to find AT_ENTRY, AT_PHDR and AT_BASE of a PIE and its ld.so).

Read from the initial stack when the process starts, where the ELF loader put it (psABI
"Process Initialization": argc, argv[], NULL, envp[], NULL, then (type, value) word pairs up to
AT_NULL) — taken before the program runs, as Linux copies it into mm->saved_auxv at exec.
"""
AT_NULL = 0
MAX_WORDS = 1 << 16         # a bound on the walk: a stack this long is not an initial one


def read_auxv(debug, thread) -> bytes:
    """The auxv words (AT_NULL pair included) of `thread`'s process, which must not have run
    since exec: its stack pointer is at argc."""
    process = thread.process
    arch = debug.arch(process)
    word = arch.word

    def at(address: int) -> int:
        return int.from_bytes(debug.read_memory(process, address, word), "little")

    sp = debug.read_register(thread, arch.sp)
    cursor = sp + word * (at(sp) + 2)               # past argc, argv[] and its NULL
    for _ in range(MAX_WORDS):                      # past envp[] and its NULL
        cursor += word
        if at(cursor - word) == 0:
            break
    start = cursor
    for _ in range(MAX_WORDS):
        kind = at(cursor)
        cursor += 2 * word
        if kind == AT_NULL:
            break
    return debug.read_memory(process, start, cursor - start)
