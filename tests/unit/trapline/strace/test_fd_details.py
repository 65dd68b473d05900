"""strace -yy's descriptor details (fd_details.py, through the door's descriptors.py): the
texts are Debian's strace 6.1 -yy output for the same sockets (a socketpair, a bound datagram
socket, TCP before binding, bound, listening and connected, UDP, TCPv6)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_model.debug.descriptors import DeviceNumber, SocketEnds
from trapline.strace.fd_details import device_suffix, socket_text

ROOT = Path(__file__).resolve().parents[4]
LOOP, ANY, LOOP6 = bytes([127, 0, 0, 1]), bytes(4), bytes(15) + b"\x01"


@pytest.mark.parametrize("ends, text", [
    (SocketEnds("UNIX-STREAM", 4063034, peer_inode=4063035), "UNIX-STREAM:[4063034->4063035]"),
    (SocketEnds("UNIX", 4063040), "UNIX:[4063040]"),
    (SocketEnds("UNIX", 4063040, path=b"/tmp/sk_test_x"), 'UNIX:[4063040,"/tmp/sk_test_x"]'),
    (SocketEnds("UNIX-STREAM", 7, peer_inode=8, path=b"\0abstract"), 'UNIX-STREAM:[7->8,"@abstract"]'),
    (SocketEnds("TCP", 4063045), "TCP:[4063045]"),
    (SocketEnds("TCP", 4063045, local=(LOOP, 46553)), "TCP:[127.0.0.1:46553]"),
    (SocketEnds("TCP", 4063050, local=(LOOP, 60110), remote=(LOOP, 46553)),
     "TCP:[127.0.0.1:60110->127.0.0.1:46553]"),
    (SocketEnds("UDP", 4063054, local=(ANY, 42997)), "UDP:[0.0.0.0:42997]"),
    (SocketEnds("TCPv6", 4063058), "TCPv6:[4063058]"),
    (SocketEnds("TCPv6", 9, local=(LOOP6, 22), remote=(LOOP6, 5555)), "TCPv6:[[::1]:22->[::1]:5555]"),
])
def test_socket_texts(ends, text):
    assert socket_text(ends) == text


def test_device_suffix():
    assert device_suffix(DeviceNumber("char", 1, 3)) == "<char 1:3>"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_unix_sockets_of_the_sockets_sample(arch, tmp_path):
    out = tmp_path / "trace"
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "--clear-env", "-yy", "-o", str(out),
                           "--", str(ROOT / "samples" / "bin" / arch / "sockets")],
                          capture_output=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    pair = next(line for line in lines if line.startswith("socketpair("))
    both = r"\[3<UNIX-STREAM:\[(\d+)->(\d+)\]>, 4<UNIX-STREAM:\[\2->\1\]>\]\) += 0$"
    first, second = map(int, re.search(both, pair).groups())
    assert second == first + 1
    assert re.search(r'^listen\(3<UNIX-STREAM:\[\d+,"server.sock"\]>, 4\) += 0$', "\n".join(lines), re.M)
    accepted = next(line for line in lines if line.startswith("accept4("))
    assert re.search(r'= 5<UNIX-STREAM:\[\d+->\d+,"server.sock"\]>$', accepted), accepted
    assert re.search(r"^pipe2?\(\[5<pipe:\[(\d+)\]>, 6<pipe:\[\1\]>\]", "\n".join(lines), re.M)
