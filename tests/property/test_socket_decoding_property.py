"""The socket calls' decoders (trapline/strace/sockets.py) on whatever bytes a guest passes:
always a line, never a traceback, and the address alone where the memory ends (strace's
unreadable pointer). Each example puts the structure in readable memory or leaves it out."""
from hypothesis import given, strategies as st

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

BUF, LEN = 0x4000, 0x5000
# (call, arguments with the structure at BUF and a length at LEN, result)
CALLS = [("bind", (3, BUF, 16), 0), ("connect", (3, BUF, 110), 0), ("sendto", (3, 0, 0, 0, BUF, 28), 0),
         ("getsockname", (3, BUF, LEN), 0), ("accept4", (3, BUF, LEN, 0x800), 5),
         ("recvfrom", (3, BUF, 64, 0x22, BUF, LEN), 10), ("sendmsg", (3, BUF, 0), 2),
         ("recvmsg", (3, BUF, 0x40000000), 2), ("setsockopt", (3, 1, 16, BUF, 4), 0),
         ("getsockopt", (3, 1, 3, BUF, LEN), 0), ("epoll_ctl", (4, 1, 3, BUF), 0),
         ("epoll_pwait", (4, BUF, 4, -1 & 0xffffffff, 0, 8), 3)]


@given(call=st.sampled_from(CALLS), bits=st.sampled_from([32, 64]), readable=st.booleans(),
       data=st.binary(min_size=0, max_size=200), length=st.integers(0, 0xffffffff))
def test_a_line_whatever_the_bytes(call, bits, readable, data, length):
    name, args, ret = call
    regions = {LEN: length.to_bytes(4, "little")}
    if readable:
        regions[BUF] = data
    line = format_syscall(name, args, ret, FakeMemory(regions), bits)
    assert line.startswith(f"{name}(") and line.endswith(f") = {ret}"), line
    if not readable and name in ("bind", "connect", "sendmsg", "epoll_ctl"):
        assert f"{BUF:#x}" in line, line
