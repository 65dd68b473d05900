"""fcntl record locks on both ABIs: two open file descriptions of one file are two OFD lock
owners, and the process's fd table a third (its POSIX locks); F_OFD_GETLK reports a lock with
l_pid -1 and F_GETLK a POSIX one with the locker's pid; a conflict is EAGAIN; closing a
description drops its OFD locks and closing any fd of the file the POSIX ones; a read lock
needs a readable fd (EBADF); i386's F_GETLK is the 32-bit struct flock, its F_*LK64 and OFD
commands the packed flock64; x86-64 has no *64 commands. Before, every lock was granted."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY, O_WRONLY, O_RDWR = 0, 1, 2
F_GETLK, F_SETLK, F_GETLK64, F_SETLK64 = 5, 6, 12, 13
F_OFD_GETLK, F_OFD_SETLK = 36, 37
F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2


def flock(arch, cmd, kind, start, length, pid=0):
    if arch == "x86_64":
        return struct.pack("<hh4xqqi4x", kind, 0, start, length, pid)
    if cmd in (F_GETLK64, F_SETLK64, F_OFD_GETLK, F_OFD_SETLK):
        return struct.pack("<hhqqi", kind, 0, start, length, pid)
    return struct.pack("<hhiii", kind, 0, start, length, pid)


def unpack(arch, cmd, raw):
    if arch == "x86_64":
        return struct.unpack_from("<hh4xqqi", raw)
    if cmd in (F_GETLK64, F_SETLK64, F_OFD_GETLK, F_OFD_SETLK):
        return struct.unpack_from("<hhqqi", raw)
    return struct.unpack_from("<hhiii", raw)


def test_ofd_and_posix_owners(arch):
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    blocks = [flock(arch, F_OFD_SETLK, F_WRLCK, 0, 10),       # 0: fd 3's OFD write lock
              flock(arch, F_OFD_GETLK, F_RDLCK, 5, 1),        # 1: asked through fd 4
              flock(arch, F_OFD_SETLK, F_RDLCK, 5, 1),        # 2: fd 4's read lock: refused
              flock(arch, F_SETLK, F_WRLCK, 20, 0),           # 3: a POSIX lock to the end
              flock(arch, F_GETLK, F_RDLCK, 30, 5),           # 4: asked by the process: no one
              flock(arch, F_OFD_GETLK, F_RDLCK, 30, 5),       # 5: asked through fd 4
              flock(arch, F_SETLK, F_RDLCK, 0, 1),            # 6: over fd 3's OFD lock
              flock(arch, F_OFD_SETLK, F_RDLCK, 5, 1),        # 7: fd 4 again, after fd 3 closed
              flock(arch, F_SETLK, F_RDLCK, 0, 1)]            # 8: on the write-only fd 5
    at = [64 * i for i in range(len(blocks))]
    data = b"".join(block.ljust(64, b"\0") for block in blocks)
    cmds = [F_OFD_SETLK, F_OFD_GETLK, F_OFD_SETLK, F_SETLK, F_GETLK, F_OFD_GETLK, F_SETLK,
            F_OFD_SETLK, F_SETLK]
    results, buf, _ = run_script(arch, [
        ("open", "/f", O_RDWR), ("open", "/f", O_RDWR), ("open", "/f", O_WRONLY),
        (fcntl, 3, cmds[0], f"BUF+{at[0]}"),
        (fcntl, 4, cmds[1], f"BUF+{at[1]}"),
        (fcntl, 4, cmds[2], f"BUF+{at[2]}"),
        (fcntl, 3, cmds[3], f"BUF+{at[3]}"),
        (fcntl, 3, cmds[4], f"BUF+{at[4]}"),
        (fcntl, 4, cmds[5], f"BUF+{at[5]}"),
        (fcntl, 4, cmds[6], f"BUF+{at[6]}"),
        ("close", 3),                                         # OFD lock and POSIX lock go
        (fcntl, 4, cmds[7], f"BUF+{at[7]}"),
        (fcntl, 5, cmds[8], f"BUF+{at[8]}"),
        (fcntl, 4, 13 if arch == "x86_64" else 99, f"BUF+{at[3]}"),
    ], data=data)
    assert results == [3, 4, 5, 0, 0, -E.EAGAIN, 0, 0, 0, -E.EAGAIN, 0, 0, -E.EBADF, -E.EINVAL]
    assert unpack(arch, F_OFD_GETLK, buf[at[1]:])[:5] == (F_WRLCK, 0, 0, 10, -1)
    assert unpack(arch, F_GETLK, buf[at[4]:])[0] == F_UNLCK          # its own lock: no conflict
    kind, _, start, length, pid = unpack(arch, F_OFD_GETLK, buf[at[5]:])
    assert (kind, start, length) == (F_WRLCK, 20, 0) and pid == 100
