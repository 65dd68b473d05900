"""strace -f's split lines: a call that is still in progress when another task's line is
printed shows what it had at its entry and `<unfinished ...>`; its end is `<... NAME resumed>`
with the rest (strace.c, printleader()/syscall_exiting_trace()).

In the sandbox a call is in progress between its entry and exit stops only while it sleeps
(a blocking read, wait4, pause...): the other tasks run then. The entry part is the arguments
before the first one the kernel fills in (syscall_line.entry_arguments); `read(3, ` then
` <unfinished ...>`, and later `<... read resumed>"data", 256) = 4`.
"""
from dataclasses import dataclass

UNFINISHED = " <unfinished ...>"


@dataclass
class InProgress:
    thread: object
    name: str
    args: object
    shown: bool = False         # its entry part was printed with <unfinished ...>


def entry_part(name: str, texts: list[str], entered: int) -> str:
    """`read(3, ` for one argument of three known at the entry; `close(4` for all of them."""
    head = f"{name}({', '.join(texts[:entered])}"
    return head + (", " if 0 < entered < len(texts) else "")


def resumed_part(name: str, texts: list[str], entered: int) -> str:
    """`<... read resumed>"data", 256)`: the arguments strace had not printed, then `)`."""
    rest = ", ".join(texts[entered:])
    return f"<... {name} resumed>{rest})"
