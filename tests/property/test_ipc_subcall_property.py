"""i386's ipc(2) is shown as the call it stands for (trapline/strace/sysv_ipc.py): strace reads
each subcall's fields where ipc/syscall.c takes them (first, second, third, ptr, fifth), so an
ipc(2) line is the direct call's line with the same values, whatever they are and whether the
memory they point to is readable: msgsnd's buffer at ptr and its size in second, semop's
array at ptr and its count in second, msgrcv's version 1 buffer at ptr and type in fifth,
a ctl call's structure at ptr, shmat's address at ptr and flags in second, shmdt's at ptr.
(The forms that differ, semctl's union pointer and msgrcv's version 0, are in the unit tests.)
"""
from hypothesis import given, strategies as st

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

BUF = 0x4000
words = st.integers(0, 0xFFFFFFFF)


def _direct(call: int, first, second, third, ptr, fifth):
    """The direct call's (name, arguments) for ipc(call | 1 << 16, ...)."""
    return {13: ("msgget", (first, second)), 2: ("semget", (first, second, third)),
            23: ("shmget", (first, second, third)), 11: ("msgsnd", (first, ptr, second, third)),
            12: ("msgrcv", (first, ptr, second, fifth, third)), 14: ("msgctl", (first, second, ptr)),
            24: ("shmctl", (first, second, ptr)), 1: ("semop", (first, ptr, second)),
            21: ("shmat", (first, ptr, second)), 22: ("shmdt", (ptr,))}[call]


@given(call=st.sampled_from([13, 2, 23, 11, 12, 14, 24, 1, 21, 22]),
       values=st.tuples(words, st.integers(0, 64), words, st.sampled_from([0, BUF]), words),
       command=st.sampled_from([0, 1, 2, 3, 11, 12, 13, 14, 0x102]),
       result=st.sampled_from([0, 5, -22, -14]), data=st.none() | st.binary(max_size=160))
def test_an_ipc_line_is_the_direct_call_s_line(call, values, command, result, data):
    first, second, third, ptr, fifth = values
    if call in (14, 24):                 # (a ctl call's second is its command)
        second = command
    name, args = _direct(call, first, second, third, ptr, fifth)
    mem = FakeMemory({} if data is None else {BUF: data})
    if call == 21 and result >= 0:       # (a shmat that worked returns its address through
        result = -22                     # third, the unit tests' case)
    through_ipc = format_syscall("ipc", (call | 1 << 16, first, second, third, ptr, fifth),
                                 result, mem, 32)
    assert through_ipc == format_syscall(name, args, result, mem, 32)
    assert through_ipc.startswith(f"{name}(")
    if call == 11 and ptr and data is not None and len(data) >= 8:
        assert "{mtype=" in through_ipc          # (the buffer read where ptr points)
