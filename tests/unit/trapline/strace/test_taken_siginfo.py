"""rt_sigtimedwait's siginfo as strace prints it (printsiginfo_at): read from the guest's memory
in each ABI's layout (the union 8-byte aligned on x86-64), a child's si_status a signal's name
for every code but CLD_EXITED, and the call's result named (`= 17 (SIGCHLD)`)."""
import struct

import pytest

from trapline.strace.siginfo import read_siginfo

from .fake_memory import FakeMemory

SIGCHLD, CLD_EXITED, CLD_STOPPED, CLD_CONTINUED = 17, 1, 5, 6


def sigchld(word: int, code: int, status: int) -> bytes:
    head = struct.pack("<iii", SIGCHLD, 0, code) + (b"\0" * 4 if word == 8 else b"")
    body = struct.pack("<iIi", 4242, 0, status) + (b"\0" * 4 if word == 8 else b"")
    times = struct.pack("<qq" if word == 8 else "<ii", 3, 1)
    return (head + body + times).ljust(128, b"\0")


@pytest.mark.parametrize("word", (4, 8))
@pytest.mark.parametrize("code,status,shown", ((CLD_STOPPED, 19, "SIGSTOP"),
                                               (CLD_CONTINUED, 18, "SIGCONT"),
                                               (CLD_EXITED, 4, "4")))
def test_a_sigchld_read_from_memory(word, code, status, shown):
    name = {CLD_STOPPED: "CLD_STOPPED", CLD_CONTINUED: "CLD_CONTINUED", CLD_EXITED: "CLD_EXITED"}
    memory = FakeMemory({0x1000: sigchld(word, code, status)})
    assert read_siginfo(memory, 0x1000, word) == (
        f"{{si_signo=SIGCHLD, si_code={name[code]}, si_pid=4242, si_uid=0, si_status={shown}, "
        "si_utime=3, si_stime=1}")


def test_an_unreadable_siginfo_is_none():
    assert read_siginfo(FakeMemory({0x1000: b"\0" * 8}), 0x1000, 8) is None
