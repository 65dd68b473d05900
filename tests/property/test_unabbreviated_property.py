"""strace -v's decoders (trapline/strace/unabbreviated.py) on whatever bytes a guest leaves:
always a line, never a traceback; a structure shown whole when its bytes are all readable, the
bare address when they are not (as strace prints an unreadable pointer)."""
from hypothesis import given, strategies as st

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

BUF = 0x4000
# (call, its arguments with the buffer, bits, the bytes its decoder reads: up to the last member
# strace prints)
CALLS = [("newfstatat", (3, 0, BUF, 0x1000), 64, 120), ("stat64", (0, BUF), 32, 96),
         ("stat", (0, BUF), 32, 56), ("statx", (3, 0, 0, 0x7ff, BUF), 64, 160),
         ("uname", (BUF,), 64, 390)]


class VerboseMemory(FakeMemory):
    verbose = True


@given(call=st.sampled_from(CALLS), whole=st.booleans(), draw=st.data())
def test_structures_in_full_or_their_address(call, whole, draw):
    name, args, bits, size = call
    data = draw.draw(st.binary(min_size=size, max_size=size + 8) if whole
                     else st.binary(max_size=size - 1))
    line = format_syscall(name, args, 0, VerboseMemory({BUF: data}), bits)
    if len(data) >= size:
        assert "{" in line and "..." not in line, line
    else:
        assert f"{BUF:#x}" in line, line


@given(data=st.binary(max_size=300), bits=st.sampled_from([32, 64]), old=st.booleans())
def test_directory_records_of_any_bytes(data, bits, old):
    name = "getdents" if old else "getdents64"
    line = format_syscall(name, (3, BUF, 4096), len(data), VerboseMemory({BUF: data}), bits)
    assert line.startswith(f"{name}(3, [") and line.endswith(f"], 4096) = {len(data)}"), line
