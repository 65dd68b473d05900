"""System V message queues and semaphore sets on both ABIs (ipc/msg.c, ipc/sem.c): keys and
ids, IPC_CREAT/IPC_EXCL, message selection by type, E2BIG and MSG_NOERROR, IPC_NOWAIT's
EAGAIN/ENOMSG, semop's all-or-nothing, GETVAL/SETALL, ERANGE, IPC_STAT's layout, permission
and removal. i386 reaches them through ipc(2) as glibc does and through its direct calls.
They were ENOSYS (LTP msgget*, msgsnd*, semctl01, semop04...)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import BUF, run_script

IPC_PRIVATE, IPC_CREAT, IPC_EXCL, IPC_NOWAIT = 0, 0o1000, 0o2000, 0o4000
IPC_RMID, IPC_SET, IPC_STAT, IPC_64 = 0, 1, 2, 0x100
MSG_NOERROR, MSG_EXCEPT = 0o10000, 0o20000
GETVAL, GETALL, SETVAL, SETALL = 12, 13, 16, 17
KEY = 0x1234
# ipc(2) calls (include/uapi/linux/ipc.h)
SEMOP, SEMGET, SEMCTL, MSGSND, MSGRCV, MSGGET, MSGCTL = 1, 2, 3, 11, 12, 13, 14


def message(arch, mtype: int, text: bytes) -> bytes:
    return struct.pack("<q" if arch == "x86_64" else "<i", mtype) + text


def msg_calls(arch, through_ipc: bool):
    """The message-queue calls by name, direct or (i386) through ipc(2)."""
    if not through_ipc:
        return {"get": lambda *a: ("msgget", *a), "snd": lambda *a: ("msgsnd", *a),
                "rcv": lambda *a: ("msgrcv", *a), "ctl": lambda i, c, b: ("msgctl", i, c | IPC_64, b)}
    return {"get": lambda key, flags: ("ipc", MSGGET, key, flags),
            "snd": lambda i, p, n, f: ("ipc", MSGSND, i, n, f, p),
            "rcv": lambda i, p, n, t, f: ("ipc", MSGRCV | 1 << 16, i, n, f, p, t),
            "ctl": lambda i, c, b: ("ipc", MSGCTL, i, c | IPC_64, 0, b)}


CASES = [("x86_64", False), ("i386", False), ("i386", True)]


@pytest.mark.parametrize("arch,through_ipc", CASES)
def test_message_queue(arch, through_ipc):
    m = msg_calls(arch, through_ipc)
    word = 8 if arch == "x86_64" else 4
    data = message(arch, 2, b"two") + message(arch, 1, b"one!") + message(arch, 0, b"x")
    two, one, zero = 0, word + 3, 2 * word + 7
    results, buf, _ = run_script(arch, [
        m["get"](KEY, IPC_CREAT | 0o600),
        m["get"](KEY, IPC_CREAT | IPC_EXCL | 0o600),
        m["get"](KEY, 0),
        m["get"](0x999, 0),
        m["snd"](0, f"BUF+{two}", 3, 0),
        m["snd"](0, f"BUF+{one}", 4, 0),
        m["snd"](0, f"BUF+{zero}", 1, 0),                  # mtype 0
        m["rcv"](0, "BUF+512", 2, 1, 0),                   # 4 bytes do not fit in 2
        m["rcv"](0, "BUF+512", 64, 1, 0),                  # type 1 first, though second
        m["rcv"](0, "BUF+600", 2, 0, MSG_NOERROR),         # the first left, cut to 2
        m["rcv"](0, "BUF+700", 64, 0, IPC_NOWAIT),
        m["ctl"](0, IPC_STAT, "BUF+800"),
        m["ctl"](0, IPC_RMID, 0),
        m["snd"](0, f"BUF+{two}", 3, 0),
    ], data=data)
    assert results == [0, -E.EEXIST, 0, -E.ENOENT, 0, 0, -E.EINVAL, -E.E2BIG, 4, 2, -E.ENOMSG,
                       0, 0, -E.EINVAL]
    assert buf[512 + word:512 + word + 4] == b"one!"
    assert int.from_bytes(buf[600:600 + word], "little") == 2 and buf[600 + word:602 + word] == b"tw"
    key, uid, gid, cuid, cgid, mode = struct.unpack_from("<iIIIII", buf, 800)
    assert (key, uid, cuid, mode & 0o777) == (KEY, 0, 0, 0o600)


def sem_calls(arch, through_ipc: bool):
    if not through_ipc:
        semop = ("semop" if arch == "x86_64" else "semtimedop_time64")
        return {"get": lambda *a: ("semget", *a), "op": lambda i, p, n: (semop, i, p, n, 0),
                "ctl": lambda i, n, c, a: ("semctl", i, n, c | IPC_64, a)}
    return {"get": lambda key, n, f: ("ipc", SEMGET, key, n, f),
            "op": lambda i, p, n: ("ipc", SEMOP, i, n, 0, p),
            "ctl": lambda i, n, c, a: ("ipc", SEMCTL, i, n, c | IPC_64, a or "BUF+34")}


@pytest.mark.parametrize("arch,through_ipc", CASES)
def test_semaphore_set(arch, through_ipc):
    s = sem_calls(arch, through_ipc)
    ops = struct.pack("<HhH", 0, -1, IPC_NOWAIT) + struct.pack("<HhH", 1, 1, 0)   # at 0
    ops += struct.pack("<HhH", 1, 5, 0) + struct.pack("<HhH", 0, 0, IPC_NOWAIT)    # at 12
    ops += struct.pack("<HhH", 0, 32767, 0)                                        # at 24
    values = struct.pack("<HH", 1, 32767)                                          # at 30
    union = (lambda v: ("BUF+" + str(v))) if through_ipc else (lambda v: v)
    data = ops + values + struct.pack("<I", 3) + struct.pack("<I", BUF + 30)       # at 34, 38
    base = "BUF+"
    results, buf, _ = run_script(arch, [
        s["get"](IPC_PRIVATE, 2, 0o600),
        s["get"](IPC_PRIVATE, 0, 0o600),                   # a new set needs semaphores
        s["op"](0, base + "0", 2),                         # sem 0 is 0: -1 would block
        s["ctl"](0, 1, GETVAL, 0),                         # nothing was applied
        s["ctl"](0, 0, SETVAL, union(34) if through_ipc else 3),
        s["op"](0, base + "0", 2),
        s["ctl"](0, 0, GETVAL, 0), s["ctl"](0, 1, GETVAL, 0),
        s["op"](0, base + "12", 2),                         # sem 0 is 2: wait-for-zero blocks
        s["ctl"](0, 0, SETALL, union(38) if through_ipc else base + "30"),
        s["op"](0, base + "24", 1),                         # 1 + 32767 passes SEMVMX
        s["ctl"](0, 0, GETALL, union(42) if through_ipc else base + "512"),
        s["ctl"](0, 0, IPC_RMID, 0),
        s["ctl"](0, 0, GETVAL, 0),
    ], data=data + struct.pack("<I", BUF + 512))                                   # at 42
    assert results == [0, -E.EINVAL, -E.EAGAIN, 0, 0, 0, 2, 1, -E.EAGAIN, 0, -E.ERANGE, 0, 0,
                       -E.EINVAL]
    assert struct.unpack_from("<HH", buf, 512) == (1, 32767)
