"""get_robust_list (LTP get_robust_list01 got ENOSYS): what set_robust_list registered and the
head's size, in words of the caller's ABI; EFAULT, ESRCH, and EPERM for another user's task."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

HEAD = 0x1230                                 # any address: the kernel only keeps it


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_get_robust_list(abi):
    word = 4 if abi == "i386" else 8
    results, buf, _ = run_script(abi, [
        ("get_robust_list", 0, "BUF", "BUF+16"), ("set_robust_list", HEAD, 3 * word),
        ("get_robust_list", 0, "BUF+32", "BUF+48"), ("get_robust_list", 0, "BUF", 0),
        ("get_robust_list", 0, 0, "BUF"), ("get_robust_list", 4242, "BUF", "BUF+16"),
        ("getpid",), ("get_robust_list", "@6", "BUF+64", "BUF+80"),
        ("setuid", 1), ("get_robust_list", 1, "BUF", "BUF+16")])
    assert results[:6] == [0, 0, 0, -E.EFAULT, -E.EFAULT, -E.ESRCH]
    assert results[7:] == [0, 0, -E.EPERM]
    fmt = "<I" if word == 4 else "<Q"
    read = [struct.unpack_from(fmt, buf, at)[0] for at in (32, 48, 64, 80)]
    assert read == [HEAD, 3 * word, HEAD, 3 * word]
