"""A pipe's bytes as one stream: how many reads take them is the writer's and reader's timing.

A reader woken by each write of a faster writer reads what is in the pipe by then: natively
(strace -f on one CPU) fork_pipe's parent reads one line a read mostly, 2 or 3 in a few reads
of an idle host's run and up to its whole 256-byte buffer under load, where the sandbox (whose
woken reader preempts its writer, process/sched.py) reads one line each time. The bytes and
their order are the program's; their cut into reads is not.

`joined` replaces each run of consecutive successful reads of the same pipe with the same
buffer size, within one process, by one read of all their bytes (strace's quoting,
trapline/strace/strings.py escape_bytes) and their total count. A read of wrong bytes, a wrong
count, a failed or missing read, a read of a regular file or a socket, or a read whose string
strace cut (`"..."...`: compare with -s as large as the buffer) stays as it was.

The pipes of a process are followed from pipe/pipe2 (and inherited at fork), dup/dup2/dup3/
fcntl(F_DUPFD) of one; a number closed, reused by another call's new descriptor, or dropped at
an execve (O_CLOEXEC) is no pipe anymore.
"""
from __future__ import annotations

import re

from trapline.strace.strings import escape_bytes

_PIPE = re.compile(r"^pipe2?\(\[(\d+), (\d+)\](?:, ([A-Z_|0-9]+))?\) = 0$")
_DUPS = (re.compile(r"^dup\((?P<old>\d+)\) = (?P<new>\d+)$"),
         re.compile(r"^dup[23]\((?P<old>\d+), (?P<new>\d+)(?:, [A-Z_|0-9]+)?\) = \d+$"),
         re.compile(r"^fcntl(?:64)?\((?P<old>\d+), F_DUPFD(?:_CLOEXEC)?, \d+\) = (?P<new>\d+)$"))
_CLOSE = re.compile(r"^close\((\d+)\) = ")
_CLOSE_RANGE = re.compile(r"^close_range\((\d+), (\d+|~0U?), ")
_EXECVE = re.compile(r"^execve(?:at)?\(.*\) = 0$")
# Calls whose result is a new descriptor: a pipe's number taken by something else.
_NEW_FD = re.compile(r"^(?:open|openat|openat2|creat|socket|accept|accept4|epoll_create1?|"
                     r"eventfd2?|signalfd4?|timerfd_create|memfd_create|inotify_init1?|"
                     r"fanotify_init|userfaultfd|perf_event_open|pidfd_open|pidfd_getfd|"
                     r"io_uring_setup|memfd_secret|open_tree|fsopen|fsmount|fspick)\(.*\) = (\d+)")
_PAIR = re.compile(r"^socketpair\(.*\[(\d+), (\d+)\]\) = 0$")
_FORK = re.compile(r"^(?:fork|vfork|clone|clone3)\(.*\) = (\d+)$")
_READ = re.compile(r'^read\((\d+), "((?:[^"\\]|\\.)*)", (\d+)\) = ([1-9]\d*)$')
_ESCAPE = re.compile(r'\\(?:([0-7]{1,3})|x([0-9a-fA-F]{2})|(.))')
_NAMED = {"n": 0x0a, "t": 0x09, "v": 0x0b, "f": 0x0c, "r": 0x0d, '"': 0x22, "\\": 0x5c}

Pipes = dict[int, bool]           # a pipe's descriptor -> whether it is closed at execve


def unquoted(text: str) -> bytes | None:
    """The bytes of strace's quoted string (without its quotes); None for an unknown escape or
    a character strace would have escaped (the text is then not strace's quoting)."""
    if not text.isascii():
        return None
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(text):
        out += text[position:match.start()].encode("ascii")
        octal, hexa, named = match.groups()
        if octal is not None:
            out.append(int(octal, 8) & 0xff)
        elif hexa is not None:
            out.append(int(hexa, 16))
        elif named in _NAMED:
            out.append(_NAMED[named])
        else:
            return None
        position = match.end()
    return bytes(out + text[position:].encode("ascii"))


def _followed(pipes: Pipes, body: str) -> Pipes:
    """The process's pipes after the call of `body`."""
    if (match := _PIPE.match(body)) is not None:
        cloexec = "O_CLOEXEC" in (match.group(3) or "")
        return {**pipes, int(match.group(1)): cloexec, int(match.group(2)): cloexec}
    for dup in _DUPS:
        if (match := dup.match(body)) is not None:
            old, new = int(match.group("old")), int(match.group("new"))
            rest = {fd: flag for fd, flag in pipes.items() if fd != new}
            return {**rest, new: "CLOEXEC" in body} if old in pipes else rest
    if (match := _CLOSE.match(body) or _NEW_FD.match(body)) is not None:
        return {fd: flag for fd, flag in pipes.items() if fd != int(match.group(1))}
    if (match := _PAIR.match(body)) is not None:
        taken = {int(match.group(1)), int(match.group(2))}
        return {fd: flag for fd, flag in pipes.items() if fd not in taken}
    if (match := _CLOSE_RANGE.match(body)) is not None:
        last = match.group(2)
        top = int(last) if last.isdigit() else 1 << 32
        return {fd: flag for fd, flag in pipes.items() if not int(match.group(1)) <= fd <= top}
    if _EXECVE.match(body):
        return {fd: flag for fd, flag in pipes.items() if not flag}
    return pipes


def _pipe_read(body: str, pipes: Pipes):
    """(fd, size, data) of a successful read of a pipe shown whole, else None."""
    match = _READ.match(body)
    if match is None or int(match.group(1)) not in pipes:
        return None
    data = unquoted(match.group(2))
    if data is None or len(data) != int(match.group(4)):
        return None
    return int(match.group(1)), int(match.group(3)), data


def _flush(result: list[str], run: list) -> None:
    if len(run) == 1:
        result.append(run[0][3])
    elif run:
        fd, size = run[0][0], run[0][1]
        data = b"".join(piece[2] for piece in run)
        result.append(f'read({fd}, "{escape_bytes(data)}", {size}) = {len(data)}')
    run.clear()


def joined(bodies: list[str], inherited: Pipes) -> tuple[list[str], dict[str, Pipes]]:
    """One process's lines (raw pids) with its pipes' reads joined (module docstring), and
    the pipes each child it forked inherited, by the child's pid."""
    pipes = dict(inherited)
    children: dict[str, Pipes] = {}
    result: list[str] = []
    run: list = []                        # (fd, size, data, body) of the reads being joined
    for body in bodies:
        read = _pipe_read(body, pipes)
        if read is not None and (not run or run[0][:2] == read[:2]):
            run.append((*read, body))
            continue
        _flush(result, run)
        if read is not None:
            run.append((*read, body))
            continue
        result.append(body)
        if (match := _FORK.match(body)) is not None:
            children[match.group(1)] = dict(pipes)
        pipes = _followed(pipes, body)
    _flush(result, run)
    return result, children
